import type { GatehouseClient } from './client.js';
import { openEventStream } from './event-stream-client.js';

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
 * expired or invalidated), following `GET /v1/events/stream`. Resolves with the final status.
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
  try {
    const events = await openEventStream(client.baseUrl, process.env.GATEHOUSE_TOKEN, stop.signal);
    // The decision may have landed before the stream opened; one after it is in the stream.
    a = await read();
    if (a.status !== 'pending') {
      progress(a);
      return a.status;
    }
    for await (const e of events) {
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
    return (await read()).status;
  } catch (err) {
    if (stop.signal.aborted) return (await read()).status;
    throw err;
  } finally {
    clearTimeout(expiry);
    stop.abort();
  }
}
