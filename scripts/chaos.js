#!/usr/bin/env node
// `npm run chaos` (issue 10): a real gateway child on a scratch data directory, mixed calls from a
// few concurrent clients, kill -9 of the gateway at random points and a restart each time; then
// the checks. Prints one summary line and exits 1 when a check fails.
//
//   node scripts/chaos.js [--calls 200] [--kills 6] [--clients 4] [--seed N] [--keep]
//
// Needs the build (`npm run build`; `npm run chaos` does it) and, for sandboxed calls, what the
// sandbox needs (bubblewrap, root); without a sandbox those calls fail before any effect and the
// checks still hold.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { Buffer } from 'node:buffer';
import { URL, fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { startDemoGateway } from './start-demo-gateway.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const { verifyReceipt, verifyInclusion, verifyCheckpoint, leafHash } = await import(
  join(ROOT, 'dist', 'audit', 'index.js')
);
const { loadConfig } = await import(join(ROOT, 'dist', 'app', 'index.js'));

/** @param {string} name @param {number} fallback */
function flag(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const CALLS = flag('calls', 200);
const KILLS = flag('kills', 6);
const CLIENTS = flag('clients', 4);
let seed = flag('seed', Date.now() % 2 ** 31);
const SEED = seed;
const KEEP = process.argv.includes('--keep');

/** A small seeded generator (mulberry32), so a failing run can be repeated with --seed. */
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-chaos-'));
const sandboxRoot = loadConfig({ dataDir }, {}).sandbox.root;

/** The running gateway child, its URL, and a promise of its exit. */
let gateway =
  /** @type {{child: import('node:child_process').ChildProcess, url: string, exited: Promise<void>} | undefined} */ (
    undefined
  );
let up = /** @type {Promise<void>} */ (Promise.resolve());

/** Starts `gatehouse serve --demo` on the data directory and waits for it to listen. */
async function startGateway() {
  gateway = await startDemoGateway(dataDir);
}

/** kill -9 the gateway, then start it again; calls wait for `up` meanwhile. */
async function killAndRestart() {
  const g = gateway;
  if (!g) return;
  gateway = undefined;
  g.child.kill('SIGKILL');
  await g.exited;
  up = startGateway();
  await up;
}

/** HTTP requests sent and not yet answered: a kill while this is above 0 cuts calls in flight. */
let pending = 0;
/** Resolves the killer's wait for the next request sent (see `requestSent`). */
let onRequestSent = () => undefined;

/** A promise settled as soon as the next request has been sent (its answer still to come). */
function requestSent() {
  return new Promise((resolve) => (onRequestSent = () => resolve(undefined)));
}

/** One HTTP request to the current gateway; throws when it is down or the connection breaks. */
async function request(method, path, token, body, key) {
  await up;
  const g = gateway;
  if (!g) throw new Error('gateway down');
  const headers = { authorization: `Bearer ${token}` };
  if (key) headers['idempotency-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const sent = globalThis.fetch(`${g.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  pending += 1;
  onRequestSent();
  try {
    const res = await sent;
    return { status: res.status, body: await res.json() };
  } finally {
    pending -= 1;
  }
}

/** `request`, retried (same key) across kills and 503s until it gets an answer. */
async function answered(method, path, token, body, key) {
  for (let i = 0; i < 60; i++) {
    try {
      const r = await request(method, path, token, body, key);
      if (r.status !== 503 && r.status < 500) return r;
    } catch {
      // Killed mid-call or down: wait for the restart, then the same request again.
    }
    await sleep(250);
  }
  throw new Error(`${method} ${path} (key ${key ?? '-'}) got no answer after 60 tries`);
}

await startGateway();
const tokens = JSON.parse(readFileSync(join(dataDir, 'demo-tokens.json'), 'utf8'));

/** The body of an invocation of a demo tool. */
function call(tool, input, extra = {}) {
  return { tool: { id: tool, version: '1.0.0' }, input, environment: 'dev', ...extra };
}

const KINDS = ['echo', 'sh', 'attempt', 'sleep', 'gated'];
/** @type {Map<string, {kind: string, id?: string, status?: string}>} */
const calls = new Map();

/** One logical call of `kind`: retried with its key across kills; gated calls approved and resumed. */
async function run(n, kind) {
  const key = `chaos-${n}`;
  const entry = { kind };
  calls.set(key, entry);
  const body =
    kind === 'echo'
      ? call('demo/echo', { message: key })
      : kind === 'sh'
        ? call('demo/sh', { script: `echo ${key} > out; cat out` })
        : kind === 'attempt'
          ? call(
              'demo/sh',
              { script: `echo ${key} >> log; wc -l < log` },
              { runId: 'chaos', attemptId: `a${n % 3}` },
            )
          : kind === 'sleep'
            ? call('demo/sleep', { ms: 100 + Math.floor(random() * 900) })
            : call('demo/propose-change', { title: key, diff: '-teh\n+the\n' });
  let r = await answered('POST', '/v1/invocations', tokens.agent, body, key);
  if (r.status === 409 && r.body.error?.code === 'EFFECT_UNCERTAIN') {
    entry.id = r.body.error.details.invocation;
    entry.status = 'uncertain';
    return;
  }
  if (kind === 'gated' && r.body.status === 'awaiting_approval') {
    const approvalId = r.body.approvalId;
    await answered('POST', `/v1/approvals/${approvalId}/approve`, tokens.reviewer, {
      reason: 'chaos',
    });
    r = await answered('POST', '/v1/invocations', tokens.agent, { ...body, approvalId }, key);
    if (r.status === 409 && r.body.error?.code === 'EFFECT_UNCERTAIN') {
      entry.id = r.body.error.details.invocation;
      entry.status = 'uncertain';
      return;
    }
  }
  entry.id = r.body.id;
  entry.status = r.body.status;
}

// Clients take calls from one counter; a killer kills at random points meanwhile, each time while
// at least one request is in flight. The first kill waits for no timer, only for requests: it
// falls on the first request sent once its call has started, so every run has one kill mid-call.
const started = Date.now();
let next = 0;
let killsDuringCalls = 0;
let clientsDone = false;
const clients = Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (next < CALLS) {
      const n = next++;
      await run(n, KINDS[Math.floor(random() * KINDS.length)]);
    }
  }),
).finally(() => (clientsDone = true));
/** Until a request is in flight (true) or the clients are done (false). */
async function callInFlight() {
  while (pending === 0 && !clientsDone) await Promise.race([requestSent(), clients]);
  return pending > 0;
}
const killer = (async () => {
  for (let k = 0; k < KILLS; k++) {
    const at = ((k + random()) / KILLS) * CALLS;
    while (next < at && !clientsDone) await Promise.race([requestSent(), clients]);
    if (k > 0) await sleep(random() * 400);
    if (!(await callInFlight())) break;
    await killAndRestart();
    killsDuringCalls += 1;
  }
})();
await Promise.all([clients, killer]);

// One more kill -9 and restart with nothing in flight: what start-up recovery leaves is final.
await killAndRestart();

const problems = [];
if (killsDuringCalls === 0) problems.push('no kill -9 landed while a call was in flight');
const STATES = new Set(['denied', 'failed', 'uncertain', 'observed']);
const jwks = (await request('GET', '/v1/receipt-keys', tokens.operator)).body;
// The signed tree head at rest: every receipt's record must be proved into this root.
const checkpoint = (await request('GET', '/v1/audit/checkpoint', tokens.operator)).body;
if (!verifyCheckpoint(checkpoint, jwks))
  problems.push('the checkpoint does not verify against GET /v1/receipt-keys');
const b = (s) => new Uint8Array(Buffer.from(s, 'base64'));
let lost = 0;
let stuck = 0;
let uncertain = 0;
let receipts = 0;
for (const [key, c] of calls) {
  if (!c.id) {
    lost += 1;
    problems.push(`${key}: no invocation id`);
    continue;
  }
  const r = await request('GET', `/v1/invocations/${c.id}`, tokens.operator);
  if (r.status !== 200) {
    lost += 1;
    problems.push(`${key}: invocation ${c.id} answers ${r.status}`);
    continue;
  }
  const rec = r.body;
  if (!STATES.has(rec.status)) {
    stuck += 1;
    problems.push(`${key}: ${c.id} is ${rec.status}`);
    continue;
  }
  if (rec.status === 'uncertain') {
    uncertain += 1;
    if (rec.effectiveClass === 'read') problems.push(`${key}: a read call is uncertain`);
    if (!['GATEWAY_RESTARTED', 'OUTCOME_NOT_RECORDED'].includes(rec.error?.code))
      problems.push(`${key}: uncertain with ${rec.error?.code}`);
  }
  if (c.kind === 'echo' && rec.status !== 'observed')
    problems.push(`${key}: a read call ended ${rec.status}`);
  const receipt = await request('GET', `/v1/invocations/${c.id}/receipt`, tokens.operator);
  const verdict = verifyReceipt(receipt.body, jwks);
  if (!verdict.ok) {
    problems.push(`${key}: receipt does not verify: ${verdict.reason}`);
    continue;
  }
  const p = verdict.statement.predicate;
  if (p.invocationId !== c.id || p.status !== rec.status)
    problems.push(`${key}: receipt says ${p.invocationId} ${p.status}`);
  // The leaf is hashed here from the record's own bytes, and the root is the signed checkpoint's:
  // nothing of the proof answer is trusted but its audit path.
  const record = (await request('GET', `/v1/audit/records/${p.audit.index}`, tokens.operator)).body;
  const leaf = leafHash(Buffer.from(record.leaf, 'utf8'));
  const proof = (
    await request(
      'GET',
      `/v1/audit/proof?index=${p.audit.index}&size=${checkpoint.treeSize}`,
      tokens.operator,
    )
  ).body;
  if (record.record?.subject !== `invocation/${c.id}`)
    problems.push(`${key}: audit record ${p.audit.index} is about ${record.record?.subject}`);
  else if (leaf.toString('base64') !== proof.leafHash)
    problems.push(`${key}: the proof's leaf hash is not the hash of audit record ${p.audit.index}`);
  else if (
    !verifyInclusion(
      leaf,
      p.audit.index,
      checkpoint.treeSize,
      proof.proof.map(b),
      b(checkpoint.rootHash),
    )
  )
    problems.push(`${key}: audit record ${p.audit.index} is not proved into the checkpoint`);
  else receipts += 1;
}

// The offline verifier over the whole log, beside the running gateway.
let auditOk = true;
try {
  execFileSync(process.execPath, [CLI, 'audit', 'verify', '--data', dataDir], { stdio: 'pipe' });
} catch (err) {
  auditOk = false;
  problems.push(`audit verify: ${String(err.stdout ?? '')}${String(err.stderr ?? '')}`.trim());
}

// Stop it cleanly; then nothing of a dead lease may be left: processes, cgroups, workspaces.
gateway.child.kill('SIGTERM');
await gateway.exited;
const db = new Database(join(dataDir, 'gatehouse.db'), { readonly: true });
const leases = db.prepare('SELECT id, status FROM leases').all();
// Every invocation the gateway holds (also attempts the clients never saw answered) is decided.
const undecided = db
  .prepare(
    `SELECT id, idempotency_key, status FROM invocations WHERE status NOT IN (${[...STATES]
      .map(() => '?')
      .join(', ')})`,
  )
  .all(...STATES);
db.close();
for (const rec of undecided) {
  stuck += 1;
  problems.push(`${rec.id} (${rec.idempotency_key}) is ${rec.status}`);
}
const activeLeases = new Set(leases.filter((l) => l.status === 'active').map((l) => l.id));
const leftBehind = [];
for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    continue;
  }
  if (cmd.includes(sandboxRoot) || cmd.includes(dataDir)) leftBehind.push(`process ${pid}`);
}
const ids = new Set(leases.map((l) => l.id));
const cgroupRoots = ['memory', 'cpu', 'cpuacct', 'pids', 'freezer']
  .map((c) => join('/sys/fs/cgroup', c, 'gatehouse'))
  .concat(join('/sys/fs/cgroup', 'gatehouse'));
/** Directories up to two levels under `dir` (cgroups: `gatehouse/<lease>` or `<instance>/<lease>`). */
function dirsUnder(dir, depth) {
  let entries = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const p = join(dir, e);
    try {
      if (!statSync(p).isDirectory()) return [];
    } catch {
      return [];
    }
    return [p, ...(depth > 1 ? dirsUnder(p, depth - 1) : [])];
  });
}
for (const root of cgroupRoots)
  for (const d of dirsUnder(root, 2))
    if (ids.has(d.split('/').pop())) leftBehind.push(`cgroup ${d}`);
const workspaces = join(sandboxRoot, 'workspaces');
if (existsSync(workspaces))
  for (const w of readdirSync(workspaces))
    if (!activeLeases.has(w)) leftBehind.push(`workspace ${w} of an ended lease`);
problems.push(...leftBehind);

const seconds = Math.round((Date.now() - started) / 1000);
const ok = problems.length === 0;
if (!ok) for (const p of problems.slice(0, 20)) process.stderr.write(`chaos: ${p}\n`);
process.stdout.write(
  `chaos ${ok ? 'PASS' : 'FAIL'}: ${calls.size} calls, ${killsDuringCalls} kill -9 during calls + 1 at rest, ${lost} lost, ${stuck} stuck, ${uncertain} uncertain (all write calls cut by a kill), ${receipts} receipts and inclusion proofs verified, audit log ${auditOk ? 'verified' : 'INVALID'}, ${leftBehind.length} left behind, ${seconds} s (seed ${SEED})\n`,
);
if (!KEEP) {
  // Bounded workspaces are tmpfs mounts that outlive the gateway (as attempts span a restart).
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1])
    .filter((p) => p !== undefined && p.startsWith(`${sandboxRoot}/`))
    .sort((a, b) => b.length - a.length);
  for (const p of mounts) spawnSync('umount', ['--lazy', p]);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(sandboxRoot, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
