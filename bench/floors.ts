/** The in-process floors: one Ed25519 signature, one Cedar decision, one durable SQLite insert. */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Gateway } from '../src/app/index.js';
import { systemClock } from '../src/core/index.js';
import { CedarEngine, TenantPolicy } from '../src/policy/index.js';
import type { PolicyRequest } from '../src/policy/index.js';
import { SqlitePolicyStore } from '../src/storage/index.js';
import { timeSync } from './measure.js';
import type { Timing } from './measure.js';

/** One Ed25519 signature (node:crypto, KeyObject) of a 2 KiB payload. */
export function signFloor(n: number): Timing {
  const { privateKey } = generateKeyPairSync('ed25519');
  const payload = randomBytes(2048);
  timeSync(n / 5, () => sign(null, payload, privateKey));
  return timeSync(n, () => sign(null, payload, privateKey));
}

/** One durable insert (WAL, synchronous=FULL, its own commit) of a row like the REST body. */
export function sqliteInsertFloor(file: string, n: number, body: string): Timing {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(
      'CREATE TABLE calls (id INTEGER PRIMARY KEY, idempotency_key TEXT NOT NULL, body TEXT NOT NULL)',
    );
    const insert = db.prepare('INSERT INTO calls (idempotency_key, body) VALUES (?, ?)');
    timeSync(n / 4, (i) => insert.run(`warm-${i}`, body));
    return timeSync(n, (i) => insert.run(`key-${i}`, body));
  } finally {
    db.close();
  }
}

/**
 * Tenant policy's decision for the demo echo call, as the policy stage asks it: `uncached`
 * evaluates Cedar every time, `cached` is the decision cache's hit path.
 */
export async function cedarFloor(
  g: Gateway,
  n: number,
): Promise<{ uncached: Timing; cached: Timing; decision: string }> {
  const descriptor = g.registry.tool('acme', 'demo/echo', '1.0.0')!.stored.descriptor;
  const request = (environment: string): PolicyRequest => ({
    tenant: 'acme',
    project: 'web',
    environment: g.directory.environment('acme', 'web', environment)!,
    agent: { id: 'demo-agent', version: '1.0.0' },
    tool: {
      id: descriptor.id,
      version: descriptor.version,
      kind: descriptor.kind,
      declaredClass: descriptor.sideEffect.class,
    },
    effectiveClass: 'read',
    input: { message: 'hello' },
  });
  // With cacheSize 0 the cache is emptied before each store, so it holds only the last decision:
  // alternating two environments makes every evaluation a miss.
  const uncachedPolicy = new TenantPolicy({
    store: new SqlitePolicyStore(g.db),
    engine: new CedarEngine(),
    clock: systemClock,
    cacheSize: 0,
  });
  await uncachedPolicy.load();
  const alternate = [request('dev'), request('prod')];
  let misses = 0;
  const uncachedRun = (i: number): void => {
    if (!uncachedPolicy.evaluate(alternate[i % 2]!).cached) misses++;
  };
  timeSync(n / 5, uncachedRun);
  misses = 0;
  const uncached = timeSync(n, uncachedRun);
  if (misses !== n) throw new Error(`expected ${n} uncached evaluations, got ${misses}`);

  const dev = request('dev');
  const first = g.policy.evaluate(dev);
  timeSync(n / 5, () => g.policy.evaluate(dev));
  const cached = timeSync(n, () => g.policy.evaluate(dev));
  if (!g.policy.evaluate(dev).cached) throw new Error('expected the cached path');
  return { uncached, cached, decision: first.decision };
}
