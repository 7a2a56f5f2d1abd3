import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import type { ErrorBody } from '../helpers/gateway-fixture.js';
import { api, useServers } from '../helpers/cli.js';
import {
  clusterUrl,
  missingPostgres,
  startServer,
  stopServer,
  useOwnCluster,
} from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

const { start, tempDir } = useServers();

const echo = (message: string) => ({
  tool: { id: 'demo/echo', version: '1.0.0' },
  input: { message },
  environment: 'dev',
});

// A cluster of this file's own, stopped and started under a running gateway.
describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))(
  'a gateway whose PostgreSQL goes away',
  () => {
    const cluster = useOwnCluster();

    it('fails calls closed (503, nothing recorded), says not ready, and recovers without a restart', async () => {
      const url = clusterUrl(cluster(), 'postgres');
      const dir = tempDir('gatehouse-pg-node-');
      const g = await start(dir, 30_000, { GATEHOUSE_DB: url });
      const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
      const call = (key: string) =>
        api<InvocationRecord & ErrorBody>(
          g.url,
          'POST',
          '/v1/invocations',
          tokens.agent,
          echo(key),
          key,
        );
      expect((await call('before')).status).toBe(200);

      stopServer(cluster());
      const refused = await call('during');
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(refused.body.error.code).toBe('UNAVAILABLE');
      const ready = await api<{ status: string }>(g.url, 'GET', '/readyz');
      expect(ready.status).toBe(503);

      startServer(cluster());
      let readyAgain = 0;
      for (let i = 0; i < 100 && readyAgain !== 200; i++) {
        await sleep(100);
        readyAgain = (await api(g.url, 'GET', '/readyz')).status;
      }
      expect(readyAgain).toBe(200);
      // The refused call left no record: retried with its key, it runs now, once.
      const retried = await call('during');
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body.status).toBe('observed');
      const list = await api<{ invocations: InvocationRecord[] }>(
        g.url,
        'GET',
        '/v1/invocations?limit=50',
        tokens.operator,
      );
      expect(list.body.invocations.filter((r) => r.idempotencyKey === 'during')).toHaveLength(1);
      expect(list.body.invocations.every((r) => r.status === 'observed')).toBe(true);
    });
  },
);
