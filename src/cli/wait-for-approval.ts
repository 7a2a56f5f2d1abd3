import { setTimeout as sleep } from 'node:timers/promises';
import type { GatehouseClient } from './client.js';
import { openEventStream } from './event-stream-client.js';

/**
 * How many times in a row the wait reopens an event stream that could not be opened or ended
 * before any event came; an event resets the count.
 */
const MAX_RECONNECTS = 5;

interface ApprovalView {
  id: string;
  status: string;
  quorum: number;
  expiresAt: string;
  invocationId: string;
  decisions: { principal: string; decision: string; reason: string }[];
}

/**
 * Shows a waiting call's progress on stderr until its approval is decided (approved, rejected,
 * expired or invalidated), following `GET /v1/events/stream`; a stream that ends is resumed with
 * `Last-Event-ID`, up to MAX_RECONNECTS times in a row. Resolves with the final status (still
 * `pending` only when the stream could not be kept).
 * @throws Error when the stream cannot be opened, after the reconnects.
 */
export async function waitForApproval(
  client: GatehouseClient,
  approvalId: string,
  key: string,
): Promise<string> {
  const read = async () =>
    (await client.request('GET', `/v1/approvals/${encodeURIComponent(approvalId)}`))
      .body as ApprovalView;
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const progress = (a: ApprovalView) => {
    const n = a.decisions.filter((d) => d.decision === 'approve').length;
    say(
      `… approval ${a.id}: ${a.status}, ${n} of ${a.quorum} approvals (expires ${a.expiresAt}); idempotency key ${key}`,
    );
  };
  let a = await read();
  progress(a);
  if (a.status !== 'pending') return a.status;
  say(`  a reviewer can run: gatehouse approvals approve ${approvalId}`);
  const stop = new AbortController();
  const expiry = setTimeout(
    () => stop.abort(),
    Math.max(0, Date.parse(a.expiresAt) - Date.now()) + 1000,
  );
  const token = process.env.GATEHOUSE_TOKEN;
  let lastEventId: number | undefined;
  // Streams in a row that failed to open or closed before any event came.
  let failures = 0;
  try {
    for (;;) {
      try {
        const events = await openEventStream(client.baseUrl, token, stop.signal, lastEventId);
        // The decision may have landed before the stream opened (or while it was down); one
        // after it is in the stream.
        a = await read();
        if (a.status !== 'pending') {
          progress(a);
          return a.status;
        }
        for await (const e of events) {
          lastEventId = e.id;
          failures = 0;
          if (e.type !== 'ApprovalDecided' || e.data.approvalId !== approvalId) continue;
          a = await read();
          progress(a);
          const last = a.decisions[a.decisions.length - 1];
          if (last)
            say(
              `  ${last.principal} ${last.decision === 'approve' ? 'approved' : 'rejected'}${last.reason ? `: ${last.reason}` : ''}`,
            );
          if (a.status !== 'pending') return a.status;
        }
      } catch (err) {
        if (stop.signal.aborted) return (await read()).status;
        if (failures >= MAX_RECONNECTS) throw err;
      }
      if (stop.signal.aborted) return (await read()).status;
      // The stream ended (a restart, a proxy, a reader the gateway found too slow): resume it.
      failures += 1;
      if (failures > MAX_RECONNECTS) return (await read()).status;
      say(
        `  the event stream ended; reconnecting${lastEventId === undefined ? '' : ` after event ${lastEventId}`} (${failures} of ${MAX_RECONNECTS})`,
      );
      await sleep(Math.min(4000, 250 * 2 ** (failures - 1)), undefined, {
        signal: stop.signal,
      }).catch(() => undefined);
    }
  } finally {
    clearTimeout(expiry);
    stop.abort();
  }
}
