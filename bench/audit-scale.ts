/**
 * The scale of the evidence (`npm run bench -- --audit-scale`): one tenant's audit log filled to a
 * million records through the real store, then what it costs at that size to append, prove
 * inclusion and consistency, sign a checkpoint, verify the whole log offline, and store a call.
 *
 *   npm run bench -- --audit-scale [--audit-records=1000000] [--audit-samples=2000]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { openDemoGateway } from './demo-gateway.js';
import {
  signCheckpoint,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from '../src/audit/index.js';
import type { ConsistencyAnswer, InclusionAnswer, SubtreeSource } from '../src/audit/index.js';
import { SqliteAuditStore, SqliteDatabase, migrations } from '../src/storage/index.js';
import { callCopy, echoCallRecords, fillLog } from './audit-fill.js';
import type { CallRecords } from './audit-fill.js';
import { collectGarbage, formatTable, percentile, timeSequential } from './measure.js';
import type { Timing } from './measure.js';

/** Options of {@link auditScaleBench}. */
export interface AuditScaleOptions {
  /** The size the tenant's log is filled to. */
  records: number;
  /** How many of each timed operation (proofs, appends); checkpoints take a tenth. */
  samples: number;
}

/**
 * The options on the bench's command line (`--audit-records=N`, `--audit-samples=N`), or null
 * when `--audit-scale` is not there.
 * @throws Error on an option that is not a positive integer.
 */
export function auditScaleOptions(argv: readonly string[]): AuditScaleOptions | null {
  const { values } = parseArgs({
    args: argv.slice(2),
    options: {
      'audit-scale': { type: 'boolean' },
      'audit-records': { type: 'string', default: '1000000' },
      'audit-samples': { type: 'string', default: '2000' },
    },
  });
  if (!values['audit-scale']) return null;
  const count = (name: 'audit-records' | 'audit-samples'): number => {
    const n = Number(values[name]);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
    return n;
  };
  return { records: count('audit-records'), samples: count('audit-samples') };
}

const FILL_BATCH = 20_000;
const TARGET_PROOF_MS = 1;
const TENANT = 'acme';

const verifyChild = fileURLToPath(new URL('./verify-child.js', import.meta.url));

const ms = (v: number): string => `${v.toFixed(3)} ms`;
const whole = (v: number): string => Math.round(v).toLocaleString('en-US');
const b64 = (s: string): Buffer => Buffer.from(s, 'base64');

/** A uniform integer in [lo, hi]. */
function between(lo: number, hi: number): number {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

function timingRow(name: string, t: Timing, perSecond: string, note: string): string[] {
  return [name, ms(t.p50), ms(t.p99), perSecond, note];
}

/** Times `fn` `n` times, each after an untimed `setup`. */
async function timeAfter(
  n: number,
  setup: (i: number) => Promise<unknown>,
  fn: () => Promise<unknown>,
): Promise<Timing> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    await setup(i);
    const t = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const total = samples.reduce((a, b) => a + b, 0);
  return {
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    perSecond: n / (total / 1000),
  };
}

/**
 * Runs what `gatehouse audit verify --data dir` runs, in a child (verify-child.ts); its wall time,
 * CPU time and peak RSS.
 */
async function verifyOffline(
  dataDir: string,
): Promise<{ ms: number; maxRssMb: number; cpuS: number }> {
  const started = process.hrtime.bigint();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((done) => {
    const child = spawn(process.execPath, [verifyChild, dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.once('exit', (c) => done({ code: c, output: text }));
  });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (code !== 0) throw new Error(`audit verify exited ${code}:\n${output}`);
  const { usage } = JSON.parse(output) as {
    usage: { maxRSS: number; userCPUTime: number; systemCPUTime: number };
  };
  return {
    ms: elapsed,
    maxRssMb: usage.maxRSS / 1024,
    cpuS: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
  };
}

/**
 * Turns the file back into one written before subtree hashes were kept, then times what migration
 * 0004 does to it (create the table, backfill every subtree hash). Only that step is run: the
 * migrations recorded after 0004 stay recorded, so opening the file would not run it again.
 */
async function timeBackfill(file: string): Promise<number> {
  const db = await SqliteDatabase.open({ file });
  try {
    await db.kysely.schema.dropTable('audit_nodes').execute();
    const started = process.hrtime.bigint();
    await migrations('sqlite')['0004_audit_nodes']!.up(db.kysely as Kysely<unknown>);
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    await db.close();
  }
}

/** Bytes of each table and index of the database (SQLite's dbstat), largest first. */
function tableBytes(file: string): Map<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC')
      .all() as { name: string; bytes: number }[];
    return new Map(rows.map((r) => [r.name, r.bytes]));
  } finally {
    db.close();
  }
}

/** Fills the log, measures, prints one table and a summary line. */
export async function auditScaleBench(o: AuditScaleOptions): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-audit-scale-'));
  const dataDir = join(root, 'data');
  const started = Date.now();
  const rows: string[][] = [];
  let call: CallRecords;
  let size: number;
  let filled: { records: number; ms: number };
  let proofs: {
    inclusion: Timing;
    consistency: Timing;
    checkpoint: Timing;
    signing: Timing;
    append: Timing;
  };
  try {
    const { gateway, agent: principal } = await openDemoGateway(dataDir);
    try {
      call = await echoCallRecords(gateway, principal, 20);

      const fillStart = process.hrtime.bigint();
      const appended = await fillLog(gateway, TENANT, call, o.records, FILL_BATCH);
      filled = {
        records: appended,
        ms: Number(process.hrtime.bigint() - fillStart) / 1e6,
      };
      const store = new SqliteAuditStore(gateway.db);
      size = await store.size(TENANT);
      const log = gateway.auditLog;
      collectGarbage();

      // Only the proof calls are timed; every answer is verified after the timing.
      const inclusions: InclusionAnswer[] = [];
      const inclusion = await timeSequential(o.samples, async () => {
        const treeSize = between(1, size);
        inclusions.push(await log.inclusion(TENANT, between(0, treeSize - 1), treeSize));
      });
      for (const a of inclusions) {
        const ok = verifyInclusion(
          b64(a.leafHash),
          a.index,
          a.treeSize,
          a.proof.map(b64),
          b64(a.rootHash),
        );
        if (!ok) throw new Error(`inclusion proof of ${a.index} in ${a.treeSize} does not verify`);
      }
      const consistencies: ConsistencyAnswer[] = [];
      const consistency = await timeSequential(o.samples, async () => {
        const to = between(1, size);
        consistencies.push(await log.consistency(TENANT, between(1, to), to));
      });
      for (const a of consistencies) {
        const ok = verifyConsistency(
          a.fromSize,
          a.toSize,
          a.proof.map(b64),
          b64(a.fromRoot),
          b64(a.toRoot),
        );
        if (!ok) throw new Error(`consistency proof ${a.fromSize}→${a.toSize} does not verify`);
      }
      // Each checkpoint at a new tree size (one call's records appended first, untimed), so each
      // stores a new signed row, as checkpoints taken between calls do.
      const checkpoint = await timeAfter(
        Math.max(1, Math.round(o.samples / 10)),
        (i) => store.append(callCopy(call, 20_000_000 + i)),
        () => log.checkpoint(TENANT),
      );
      // The same without the durable write: the root from stored subtrees and the signature.
      const source: SubtreeSource = async (refs) =>
        (await store.subtreeHashes(TENANT, refs)).map((h) => {
          if (!h) throw new Error('a subtree is missing');
          return h;
        });
      const treeSize = await store.size(TENANT);
      const signing = await timeSequential(o.samples, async () => {
        const head = { tenant: TENANT, treeSize, timestamp: new Date().toISOString() };
        signCheckpoint({ ...head, rootHash: await treeRoot(source, treeSize) }, gateway.keyring);
      });
      collectGarbage();
      // What traffic does at this size: one call's records per transaction, each durably committed.
      const append = await timeSequential(o.samples, (i) =>
        store.append(callCopy(call, 10_000_000 + i)),
      );
      size = await store.size(TENANT);
      proofs = { inclusion, consistency, checkpoint, signing, append };
    } finally {
      await gateway.close();
    }

    const file = join(dataDir, 'gatehouse.db');
    const fileBytes = (await stat(file)).size;
    const tables = tableBytes(file);
    const backfillMs = await timeBackfill(file);
    // After the backfill, so its check of every stored subtree hash covers the backfilled ones.
    const verify = await verifyOffline(dataDir);

    const perRecord = fileBytes / size;
    const auditNames = [...tables.keys()].filter((n) => /audit/.test(n));
    const auditBytes = auditNames.reduce((s, n) => s + (tables.get(n) ?? 0), 0);
    const jcsPerRecord = call.bytes / call.drafts.length;
    rows.push(
      [
        `fill to ${whole(size)} records`,
        '-',
        '-',
        whole(filled.records / (filled.ms / 1000)),
        `${(filled.ms / 1000).toFixed(1)} s for ${whole(filled.records)} records, ${whole(FILL_BATCH)} per transaction (records/s)`,
      ],
      timingRow(
        `append one call's ${call.drafts.length} records at ${whole(size)}`,
        proofs.append,
        whole(proofs.append.perSecond * call.drafts.length),
        `AuditStore.append, own durable commit each, ${o.samples} calls (records/s)`,
      ),
      timingRow(
        'inclusion proof, random index and tree size',
        proofs.inclusion,
        whole(proofs.inclusion.perSecond),
        `AuditLog.inclusion, ${o.samples} proofs, each verified (untimed)`,
      ),
      timingRow(
        'consistency proof, random from ≤ to',
        proofs.consistency,
        whole(proofs.consistency.perSecond),
        `AuditLog.consistency, ${o.samples} proofs, each verified (untimed)`,
      ),
      timingRow(
        'checkpoint: root, sign, durable store',
        proofs.checkpoint,
        whole(proofs.checkpoint.perSecond),
        `AuditLog.checkpoint, ${Math.max(1, Math.round(o.samples / 10))}, each at a new tree size`,
      ),
      timingRow(
        'checkpoint: root and Ed25519 signature only',
        proofs.signing,
        whole(proofs.signing.perSecond),
        `treeRoot + signCheckpoint, ${o.samples} times`,
      ),
      [
        'migration 0004: backfill the subtree hashes of the log',
        ms(backfillMs),
        '-',
        whole(size / (backfillMs / 1000)),
        'a data directory written before they were kept, opened (records/s)',
      ],
      [
        '`audit verify` (verifyDataDirectory), whole log',
        ms(verify.ms),
        '-',
        whole(size / (verify.ms / 1000)),
        `child process, 1 run, offline, every record and subtree hash, CPU ${verify.cpuS.toFixed(0)} s, peak RSS ${verify.maxRssMb.toFixed(0)} MB (records/s)`,
      ],
      [
        'database bytes per record',
        whole(perRecord),
        '-',
        '-',
        `file ${(fileBytes / 2 ** 20).toFixed(0)} MiB / ${whole(size)} records; audit tables ${(auditBytes / 2 ** 20).toFixed(0)} MiB (${auditNames.map((n) => `${n} ${(((tables.get(n) ?? 0) / fileBytes) * 100).toFixed(0)}%`).join(', ')}); JCS ${whole(jcsPerRecord)} B/record`,
      ],
      [
        `database bytes per demo/echo call (${call.perCall} records)`,
        whole(perRecord * call.perCall),
        '-',
        '-',
        `a read call writes ${call.perCall} audit records: ${call.drafts.map((d) => d.type).join(', ')}`,
      ],
    );
    const out = process.stdout;
    out.write(
      `Gatehouse audit-scale bench — node ${process.version}, ${cpus().length} CPUs, data in ${root}\n\n`,
    );
    out.write(`${formatTable(['measurement', 'p50', 'p99', 'per second', 'notes'], rows)}\n\n`);
    const met = (t: Timing): string => (t.p50 < TARGET_PROOF_MS ? 'met' : 'missed');
    out.write(
      `Summary at ${whole(size)} records: inclusion proof p50 ${ms(proofs.inclusion.p50)} (p99 ${ms(proofs.inclusion.p99)}) vs target < ${ms(TARGET_PROOF_MS)} (${met(proofs.inclusion)}); ` +
        `consistency proof p50 ${ms(proofs.consistency.p50)} (p99 ${ms(proofs.consistency.p99)}) vs target < ${ms(TARGET_PROOF_MS)} (${met(proofs.consistency)}); ` +
        `checkpoint ${ms(proofs.checkpoint.p50)} (root + signature ${ms(proofs.signing.p50)}); audit verify ${(verify.ms / 1000).toFixed(1)} s; ${whole(perRecord * call.perCall)} bytes per call.\n`,
    );
    out.write(`(${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
