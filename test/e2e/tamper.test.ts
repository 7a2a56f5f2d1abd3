import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MerkleFrontier } from '../../src/audit/index.js';
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
  // On SQLite whatever the run's backend: these tests edit the database file by hand.
  g = await startDemoGateway({ backend: 'sqlite' });
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

/**
 * Changes one byte of the stored audit record `index`: `tamper-me` becomes `tamper-mf`; with
 * `alsoLeafHash`, rewrites its leaf hash and every stored subtree hash to match, as a forger with
 * write access to the file would.
 */
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
    if (alsoLeafHash) rehashSubtrees(db, 'acme');
  } finally {
    db.close();
  }
}

/** Rewrites every stored subtree hash of a tenant's log from its stored leaf hashes. */
function rehashSubtrees(db: Database.Database, tenant: string): void {
  const leaves = db
    .prepare('SELECT leaf_hash FROM audit_records WHERE tenant = ? ORDER BY idx')
    .all(tenant) as { leaf_hash: string }[];
  const frontier = new MerkleFrontier();
  const update = db.prepare(
    'UPDATE audit_nodes SET hash = ? WHERE tenant = ? AND level = ? AND idx = ?',
  );
  let rewritten = 0;
  for (const { leaf_hash } of leaves) {
    for (const n of frontier.append(Buffer.from(leaf_hash, 'base64'))) {
      rewritten += update.run(n.hash, tenant, n.level, n.index).changes;
    }
  }
  expect(rewritten).toBe(leaves.length - popcount(leaves.length));
}

const popcount = (n: number): number => n.toString(2).replace(/0/g, '').length;

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

  it('catches a rewrite that also fixes the leaf and subtree hashes, through the signed checkpoint', async () => {
    const { dir, index } = await logWithCalls(true);
    expect((await runCli(['audit', 'verify', '--data', dir])).code).toBe(0);

    flipOneByte(dir, index, true);
    const tampered = await runCli(['audit', 'verify', '--data', dir]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toMatch(
      /tenant acme: INVALID at index \d+: the root over the first \d+ records differs from the signed checkpoint/,
    );
    const reported = Number(/at index (\d+)/.exec(tampered.stderr)?.[1]);
    expect(reported).toBeGreaterThanOrEqual(index);
  });

  it('catches a changed or missing stored subtree hash, which proofs are served from', async () => {
    const { dir } = await logWithCalls(false);
    const db = new Database(join(dir, 'gatehouse.db'));
    const level2 = 'tenant = ? AND level = 2 AND idx = 0';
    try {
      const size = (
        db.prepare('SELECT count(*) AS n FROM audit_records WHERE tenant = ?').get('acme') as {
          n: number;
        }
      ).n;
      expect(size).toBeGreaterThanOrEqual(4);
      const changed = db
        .prepare(`UPDATE audit_nodes SET hash = zeroblob(32) WHERE ${level2}`)
        .run('acme');
      expect(changed.changes).toBe(1);
    } finally {
      db.close();
    }
    const tampered = await runCli(['audit', 'verify', '--data', dir]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(
      'tenant acme: INVALID at index 3: the stored hash of the subtree over records 0..3 differs from the one recomputed from them',
    );

    const again = new Database(join(dir, 'gatehouse.db'));
    try {
      expect(again.prepare(`DELETE FROM audit_nodes WHERE ${level2}`).run('acme').changes).toBe(1);
    } finally {
      again.close();
    }
    const missing = await runCli(['audit', 'verify', '--data', dir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'tenant acme: INVALID at index 3: the stored hash of the subtree over records 0..3 is missing',
    );
  });
});
