import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openDemoGateway } from './demo-gateway.js';
import { collectGarbage, timeInterleaved } from './measure.js';
import type { Timing } from './measure.js';

/** The governed `tickets/get-ticket` call and the same GET with plain fetch, taking turns. */
export interface HttpBench {
  governed: Timing;
  direct: Timing;
}

/**
 * The demo's `tickets/get-ticket` (an `http` tool: egress check, pinned connection, brokered
 * bearer key, redaction, receipt) in-process, against the same GET sent by plain `fetch` to the
 * same loopback ticket service, one call at a time, taking turns.
 */
export async function httpBench(
  dataDir: string,
  calls: number,
  warmup: number,
): Promise<HttpBench> {
  const { gateway, agent } = await openDemoGateway(dataDir);
  try {
    const state = JSON.parse(await readFile(join(dataDir, 'demo-tickets.json'), 'utf8')) as {
      port: number;
      apiKey: string;
    };
    const base = `http://127.0.0.1:${state.port}/api/tickets`;
    const headers = { authorization: `Bearer ${state.apiKey}`, 'content-type': 'application/json' };
    const made = await fetch(base, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'bench' }),
    });
    const { id } = (await made.json()) as { id: string };
    const governed = async (i: number): Promise<void> => {
      const record = await gateway.invocations.invoke(agent, {
        tool: { id: 'tickets/get-ticket', version: '1.0.0' },
        input: { ticketId: id },
        environment: 'dev',
        idempotencyKey: `http-${i}-${Math.random()}`,
      });
      if (record.status !== 'observed')
        throw new Error(
          `tickets/get-ticket ended ${record.status}: ${JSON.stringify(record.error)}`,
        );
    };
    const direct = async (): Promise<void> => {
      const res = await fetch(`${base}/${id}`, { headers });
      if (res.status !== 200) throw new Error(`GET ${base}/${id} answered ${res.status}`);
      await res.json();
    };
    await timeInterleaved(warmup, [governed, direct]);
    collectGarbage();
    const [g, d] = await timeInterleaved(calls, [governed, direct]);
    return { governed: g!, direct: d! };
  } finally {
    await gateway.close();
  }
}
