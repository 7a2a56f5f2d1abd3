import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

beforeAll(() => {
  ensureBuilt();
});

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

/** A closed gateway's data directory with a few calls in it; the index of the marked call's record. */
async function logWithCalls(checkpoint: boolean): Promise<{ dir: string; index: number }> {
  g = await startDemoGateway();
  const d = g;
  await d.invoke(d.tokens.agent, 'first', call('demo/echo', { message: 'first' }));
  const marked = await d.invoke(
    d.tokens.agent,
    'marked',
    call('demo/echo', { message: 'tamper-me' }),
  );
  await d.invoke(d.tokens.agent, 'denied', call('demo/echo', { nope: 1 }));
  await d.invoke(d.tokens.agent, 'last', call('demo/echo', { message: 'last' }));
  if (checkpoint) {
    const cp = await d.inject('GET', '/v1/audit/checkpoint', { token: d.tokens.operator });
    expect(cp.status).toBe(200);
  }
  await d.stop();
  expect(marked.body.status).toBe('observed');
  return { dir: d.dataDir, index: (marked.body.audit as { index: number }).index };
}

/** Changes one byte of the stored audit record `index`: `tamper-me` becomes `tamper-mf`. */
function flipOneByte(dir: string, index: number, alsoLeafHash: boolean): void {
  const db = new Database(join(dir, 'gatehouse.db'));
  try {
    const row = db
      .prepare('SELECT record FROM audit_records WHERE tenant = ? AND idx = ?')
      .get('acme', index) as { record: string };
    const at = row.record.indexOf('tamper-me');
    expect(at).toBeGreaterThan(0);
    const changed = `${row.record.slice(0, at)}tamper-mf${row.record.slice(at + 'tamper-me'.length)}`;
    expect(Buffer.byteLength(changed)).toBe(Buffer.byteLength(row.record));
    const leaf = createHash('sha256')
      .update(Buffer.from([0]))
      .update(changed, 'utf8')
      .digest('base64');
    const sql = alsoLeafHash
      ? 'UPDATE audit_records SET record = ?, leaf_hash = ? WHERE tenant = ? AND idx = ?'
      : 'UPDATE audit_records SET record = ? WHERE tenant = ? AND idx = ?';
    const args = alsoLeafHash ? [changed, leaf, 'acme', index] : [changed, 'acme', index];
    expect(db.prepare(sql).run(...args).changes).toBe(1);
  } finally {
    db.close();
  }
}

describe('gatehouse audit verify', () => {
  it('passes an intact log and names the index of one changed byte', async () => {
    const { dir, index } = await logWithCalls(false);
    const intact = await runCli(['audit', 'verify', '--data', dir]);
    expect(intact.stderr).toBe('');
    expect(intact.code).toBe(0);
    expect(intact.stdout).toMatch(/tenant acme: OK, \d+ records/);

    flipOneByte(dir, index, false);
    const tampered = await runCli(['audit', 'verify', '--data', dir]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(`tenant acme: INVALID at index ${index}:`);
  });

  it('catches a rewrite that also fixes the leaf hash, through the signed checkpoint', async () => {
    const { dir, index } = await logWithCalls(true);
    expect((await runCli(['audit', 'verify', '--data', dir])).code).toBe(0);

    flipOneByte(dir, index, true);
    const tampered = await runCli(['audit', 'verify', '--data', dir]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toMatch(/tenant acme: INVALID at index \d+: .*checkpoint/);
    const reported = Number(/at index (\d+)/.exec(tampered.stderr)?.[1]);
    expect(reported).toBeGreaterThanOrEqual(index);
  });
});
