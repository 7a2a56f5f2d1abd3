import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, runCli, useServers } from '../helpers/cli.js';
import { freshPostgresDatabase, missingPostgres, queryPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

const { start, tempDir } = useServers();

const echo = (message: string) => ({
  tool: { id: 'demo/echo', version: '1.0.0' },
  input: { message },
  environment: 'dev',
});

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))(
  'gatehouse serve on PostgreSQL',
  () => {
    it('runs a governed call with its record, log and receipt in PostgreSQL, and audit verify reads it', async () => {
      const url = await freshPostgresDatabase('gw');
      const dir = tempDir('gatehouse-pg-node-');
      const first = await start(dir, 30_000, { GATEHOUSE_DB: url });
      const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;

      const called = await api<InvocationRecord>(
        first.url,
        'POST',
        '/v1/invocations',
        tokens.agent,
        echo('over postgres'),
        'pg-echo-1',
      );
      expect(called.status).toBe(200);
      expect(called.body.status).toBe('observed');
      const receipt = await api(
        first.url,
        'GET',
        `/v1/invocations/${called.body.id}/receipt`,
        tokens.agent,
      );
      expect(receipt.status).toBe(200);

      // Stored in PostgreSQL, not in a SQLite file of the data directory.
      expect(existsSync(join(dir, 'gatehouse.db'))).toBe(false);
      const rows = await queryPostgres<{ status: string }>(
        url,
        `select status from invocations where id = '${called.body.id}'`,
      );
      expect(rows).toEqual([{ status: 'observed' }]);
      const [head] = await queryPostgres<{ size: string }>(
        url,
        `select size from audit_heads where tenant = 'acme'`,
      );
      const [top] = await queryPostgres<{ top: string }>(
        url,
        `select max(idx) as top from audit_records where tenant = 'acme'`,
      );
      expect(Number(head!.size)).toBe(Number(top!.top) + 1);

      // A restarted gateway finds the call by its key: the same record, not a second execution.
      await first.kill('SIGTERM');
      const second = await start(dir, 30_000, { GATEHOUSE_DB: url });
      const replay = await api<InvocationRecord>(
        second.url,
        'POST',
        '/v1/invocations',
        tokens.agent,
        echo('over postgres'),
        'pg-echo-1',
      );
      expect(replay.status).toBe(200);
      expect(replay.body.id).toBe(called.body.id);
      const count = await queryPostgres<{ n: string }>(
        url,
        `select count(*) as n from invocations`,
      );
      expect(Number(count[0]!.n)).toBe(1);

      const verified = await runCli(['audit', 'verify', '--data', dir, '--db', url]);
      expect(verified.stderr).toBe('');
      expect(verified.code).toBe(0);
      expect(verified.stdout).toMatch(/tenant acme: OK, \d+ records/);
    });

    it('refuses a database URL it cannot use with a clear message', async () => {
      const dir = tempDir('gatehouse-pg-node-');
      await expect(start(dir, 30_000, { GATEHOUSE_DB: 'mysql://localhost/x' })).rejects.toThrow(
        /must be postgres:\/\/…, sqlite:PATH or a file path/,
      );
    });
  },
);
