import { copyFileSync, cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, runCli, useServers } from '../helpers/cli.js';
import type { ServerProcess } from '../helpers/cli.js';
import { freshPostgresDatabase, missingPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

const { start, tempDir } = useServers();

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

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

const nodeEnv = (url: string) => ({
  GATEHOUSE_DB: url,
  GATEHOUSE_NODE_HEARTBEAT_MS: '500',
  GATEHOUSE_NODE_GRACE_MS: '3000',
  GATEHOUSE_SANDBOX: 'off',
});

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))(
  'calls spread over two nodes while one is killed and restarted twice',
  () => {
    it('finds every acknowledged call with its outcome and leaves none running', async () => {
      const url = await freshPostgresDatabase('churn');
      const dirA = tempDir('gatehouse-churn-a-');
      const dirB = tempDir('gatehouse-churn-b-');
      let a: ServerProcess | undefined = await start(dirA, 90_000, nodeEnv(url));
      cpSync(join(dirA, 'keys'), join(dirB, 'keys'), { recursive: true });
      copyFileSync(join(dirA, 'demo-tokens.json'), join(dirB, 'demo-tokens.json'));
      const b = await start(dirB, 90_000, nodeEnv(url));
      const tokens = JSON.parse(readFileSync(join(dirA, 'demo-tokens.json'), 'utf8')) as DemoTokens;

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
          const dying = a!;
          a = undefined;
          await dying.kill('SIGKILL');
          a = await start(dirA, 90_000, nodeEnv(url));
        }
      };
      await Promise.all([worker(), worker(), worker(), worker(), chaos()]);
      expect(acknowledged.size).toBeGreaterThan(CALLS / 2);

      // Whatever the kills left running is settled: by the restart or by the surviving node.
      let running = 1;
      for (let i = 0; i < 300 && running > 0; i++) {
        running = Number(
          (
            await query<{ n: string }>(
              url,
              `select count(*) as n from invocations where status in ('running', 'queued')`,
            )
          )[0]!.n,
        );
        if (running > 0) await sleep(100);
      }
      expect(running).toBe(0);

      // Every acknowledged call is stored with the outcome it was acknowledged with.
      const rows = await query<{ idempotency_key: string; id: string; status: string }>(
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
      const verified = await runCli(['audit', 'verify', '--data', dirB, '--db', url]);
      expect(verified.stderr).toBe('');
      expect(verified.code).toBe(0);
    }, 600_000);
  },
);
