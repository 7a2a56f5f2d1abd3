import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet } from '../../src/audit/index.js';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, runCli, useServers } from '../helpers/cli.js';
import type { ServerProcess } from '../helpers/cli.js';
import { freshPostgresDatabase, missingPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

const { start, tempDir } = useServers();

/** One echo call through `server`; its receipt's envelope and the key id that signed it. */
async function echoReceipt(server: ServerProcess, dir: string, key: string) {
  const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
  const called = await api<InvocationRecord>(
    server.url,
    'POST',
    '/v1/invocations',
    tokens.agent,
    { tool: { id: 'demo/echo', version: '1.0.0' }, input: { message: key }, environment: 'dev' },
    key,
  );
  expect(called.body.status).toBe('observed');
  const receipt = await api<{ signatures: { keyid: string }[] }>(
    server.url,
    'GET',
    `/v1/invocations/${called.body.id}/receipt`,
    tokens.agent,
  );
  return { envelope: receipt.body, keyid: receipt.body.signatures[0]!.keyid };
}

const receiptKeys = async (server: ServerProcess) =>
  (await api<JwkSet>(server.url, 'GET', '/v1/receipt-keys')).body;

/** `keys list` lines as [kid, state]. */
async function listed(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string[][]> {
  const run = await runCli(['keys', 'list', ...args], env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout
    .trim()
    .split('\n')
    .map((line) => {
      const [kid, , , state] = line.split(/\s+/);
      return [kid!, state!];
    });
}

describe('gatehouse keys rotate and list', () => {
  it('on SQLite: refused while the gateway holds the data directory; once stopped, rotates, and receipts of both keys verify', async () => {
    const dir = tempDir('gatehouse-keys-');
    // On SQLite whatever the run's backend (test/helpers/test-backend.ts).
    const sqlite = { GATEHOUSE_DB: join(dir, 'gatehouse.db') };
    let server = await start(dir, undefined, sqlite);
    const before = await echoReceipt(server, dir, 'before-rotation');

    const refused = await runCli(['keys', 'rotate', '--data', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(String(server.pid));
    expect(await listed(['--data', dir])).toEqual([[before.keyid, 'active']]);

    await server.kill('SIGTERM');
    const rotated = await runCli(['keys', 'rotate', '--data', dir]);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const [, active] = /rotated: (\S+) signs/.exec(rotated.stdout) ?? [];
    expect(active).toBeDefined();
    expect(active).not.toBe(before.keyid);
    expect(await listed(['--data', dir])).toEqual([
      [before.keyid, 'retired'],
      [active!, 'active'],
    ]);

    server = await start(dir, undefined, sqlite);
    const after = await echoReceipt(server, dir, 'after-rotation');
    expect(after.keyid).toBe(active);
    const keys = await receiptKeys(server);
    expect(verifyReceipt(before.envelope, keys).ok).toBe(true);
    expect(verifyReceipt(after.envelope, keys).ok).toBe(true);
    await server.kill('SIGTERM');
    const verified = await runCli(['audit', 'verify', '--data', dir]);
    expect(verified.code).toBe(0);
  }, 90_000);

  it('says what is missing: no keys in a directory, no master key for the database', async () => {
    const empty = tempDir('gatehouse-keys-empty-');
    const none = await runCli(['keys', 'list', '--data', empty]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/No signing keys in .*keys: no gateway has started there yet/);
    const rotate = await runCli(['keys', 'rotate', '--data', empty]);
    expect(rotate.code).toBe(2);
  });

  it.skipIf(skipWithout('PostgreSQL', missingPostgres()))(
    'on PostgreSQL: rotates beside a running node, which signs with the new key within seconds',
    async () => {
      const url = await freshPostgresDatabase('keys');
      const dir = tempDir('gatehouse-keys-pg-');
      const server = await start(dir, 30_000, { GATEHOUSE_DB: url });
      const before = await echoReceipt(server, dir, 'pg-before');

      // The master key seals the new private key: none here, none in the environment.
      const noMaster = await runCli(['keys', 'rotate', '--db', url, '--data', tempDir('gh-x-')]);
      expect(noMaster.code).toBe(2);
      expect(noMaster.stderr).toMatch(/No master key: GATEHOUSE_MASTER_KEY is not set/);

      const rotated = await runCli(['keys', 'rotate', '--db', url, '--data', dir]);
      expect(rotated.stderr).toBe('');
      expect(rotated.code).toBe(0);
      const [, active] = /rotated: (\S+) signs/.exec(rotated.stdout) ?? [];
      expect(await listed(['--db', url])).toEqual([
        [before.keyid, 'retired'],
        [active!, 'active'],
      ]);
      // The node reloads its keys every 5 s: poll until it signs with the new one.
      let after = await echoReceipt(server, dir, 'pg-after-0');
      for (let i = 1; i < 40 && after.keyid !== active; i += 1) {
        await new Promise((ok) => setTimeout(ok, 250));
        after = await echoReceipt(server, dir, `pg-after-${i}`);
      }
      expect(after.keyid).toBe(active);
      const keys = await receiptKeys(server);
      expect(verifyReceipt(before.envelope, keys).ok).toBe(true);
      expect(verifyReceipt(after.envelope, keys).ok).toBe(true);
    },
    90_000,
  );
});
