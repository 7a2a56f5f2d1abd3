import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, runCli } from '../helpers/cli.js';
import type { ServerProcess } from '../helpers/cli.js';
import { useNodes } from '../helpers/nodes.js';
import { missingPostgres, queryPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

const CALLS = 200;

/** Half quick reads, half short writes (recorded `running` before they act). */
const call = (i: number) =>
  i % 2 === 0
    ? {
        tool: { id: 'demo/echo', version: '1.0.0' },
        input: { message: `m${i}` },
        environment: 'dev',
      }
    : { tool: { id: 'demo/sleep', version: '1.0.0' }, input: { ms: 300 }, environment: 'dev' };

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))(
  'calls spread over two nodes while one is killed and restarted twice',
  () => {
    const cluster = useNodes(2, {
      GATEHOUSE_NODE_HEARTBEAT_MS: '500',
      GATEHOUSE_NODE_GRACE_MS: '3000',
    });

    it('finds every acknowledged call with its outcome and leaves none running', async () => {
      const g = cluster.get();
      const { db: url, tokens } = g;
      let a: ServerProcess | undefined = g.nodes[0];
      const b = g.nodes[1]!;

      const acknowledged = new Map<string, { id: string; status: string }>();
      let next = 0;
      const worker = async () => {
        while (next < CALLS) {
          const i = next++;
          // Round robin, to whichever node is up.
          const node = i % 2 === 0 && a ? a : b;
          const key = `churn-${i}`;
          try {
            const r = await api<InvocationRecord>(
              node.url,
              'POST',
              '/v1/invocations',
              tokens.agent,
              call(i),
              key,
            );
            if (r.status === 200) acknowledged.set(key, { id: r.body.id, status: r.body.status });
          } catch {
            // The node died under the call: not acknowledged.
          }
        }
      };
      const chaos = async () => {
        for (const threshold of [40, 110]) {
          while (acknowledged.size < threshold && next < CALLS) await sleep(20);
          a = undefined;
          a = await g.restart(0, 'SIGKILL');
        }
      };
      await Promise.all([worker(), worker(), worker(), worker(), chaos()]);
      expect(acknowledged.size).toBeGreaterThan(CALLS / 2);

      // Whatever the kills left running is settled: by the restart or by the surviving node.
      let running = 1;
      for (let i = 0; i < 300 && running > 0; i++) {
        running = Number(
          (
            await queryPostgres<{ n: string }>(
              url,
              `select count(*) as n from invocations where status in ('running', 'queued')`,
            )
          )[0]!.n,
        );
        if (running > 0) await sleep(100);
      }
      expect(running).toBe(0);

      // Every acknowledged call is stored with the outcome it was acknowledged with.
      const rows = await queryPostgres<{ idempotency_key: string; id: string; status: string }>(
        url,
        'select idempotency_key, id, status from invocations',
      );
      const stored = new Map(rows.map((r) => [r.idempotency_key, r]));
      for (const [key, ack] of acknowledged) {
        expect(stored.get(key), key).toMatchObject({ id: ack.id, status: ack.status });
      }
      // Each key ran once.
      expect(stored.size).toBe(rows.length);

      await a?.kill('SIGTERM');
      await b.kill('SIGTERM');
      const verified = await runCli(['audit', 'verify', '--db', url]);
      expect(verified.stderr).toBe('');
      expect(verified.code).toBe(0);
    }, 600_000);
  },
);
