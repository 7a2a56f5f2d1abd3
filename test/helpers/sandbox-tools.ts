import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet, ReceiptPredicate } from '../../src/audit/index.js';
import { addAgent } from './agents.js';
import type { DemoGateway } from './gateway-fixture.js';
import { storedRows, storedRowsOf } from './stored-rows.js';

/** A `shell` descriptor running `sh -c {/script}`, with `extra` laid over it. */
export function shTool(
  id: string,
  extra: Record<string, unknown> = {},
  execution: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    version: '1.0.0',
    kind: 'shell',
    title: id,
    description: `${id}: sh -c SCRIPT in a sandbox (a test tool).`,
    inputSchema: {
      type: 'object',
      required: ['script'],
      additionalProperties: false,
      properties: { script: { type: 'string', minLength: 1 } },
    },
    sideEffect: { class: 'workspace-write' },
    execution: { argv: ['sh', '-c', '{/script}'], ...execution },
    timeoutMs: 10_000,
    ...extra,
  };
}

/**
 * Publishes `tools` (descriptors) and an agent release `agentId@1.0.0` holding them, as the demo
 * admin, and creates an agent principal of that release in project `web`.
 * @returns the agent's bearer token.
 */
export async function publishAgent(
  g: DemoGateway,
  agentId: string,
  tools: Record<string, unknown>[],
): Promise<string> {
  const events = tools.map((d) => ({
    id: `test:${String(d.id)}@${String(d.version)}`,
    type: 'AssetReleasePublished',
    data: { assetId: d.id, version: d.version, descriptor: d, inFlightPolicy: 'finish' },
  }));
  const published = await g.inject<{ results: { result: string; message: string }[] }>(
    'POST',
    '/v1/events',
    { token: g.tokens.admin, body: events },
  );
  expect(published.status, JSON.stringify(published.body)).toBe(200);
  for (const r of published.body.results) expect(r.result, r.message).toBe('applied');
  const closure = tools.map((d) => ({ id: String(d.id), version: String(d.version) }));
  return (await addAgent(g, agentId, closure)).token;
}

/** The receipt of an invocation, verified against `GET /v1/receipt-keys`; throws if it does not verify. */
export async function verifiedReceipt(
  g: DemoGateway,
  invocationId: string,
  token = g.tokens.operator,
): Promise<{ predicate: ReceiptPredicate; envelope: unknown }> {
  const keys = await g.inject<JwkSet>('GET', '/v1/receipt-keys');
  const receipt = await g.inject('GET', `/v1/invocations/${invocationId}/receipt`, { token });
  expect(receipt.status).toBe(200);
  const verdict = verifyReceipt(receipt.body, keys.body);
  if (!verdict.ok) throw new Error(`the receipt does not verify: ${verdict.reason}`);
  return { predicate: verdict.statement.predicate, envelope: receipt.body };
}

/** One stored audit record, parsed. */
export interface AuditRow {
  idx: number;
  type: string;
  subject: string;
  actor: string;
  data: Record<string, unknown>;
}

/** Every audit record of the tenant, in log order, read from the database. */
export async function auditRecords(g: DemoGateway, tenant = 'acme'): Promise<AuditRow[]> {
  const rows = await storedRows<{ idx: number; record: string }>(
    g,
    'SELECT idx, record FROM audit_records WHERE tenant = ? ORDER BY idx',
    tenant,
  );
  return rows.map((r) => ({ idx: r.idx, ...(JSON.parse(r.record) as Omit<AuditRow, 'idx'>) }));
}

/** The raw text of every audit record of the tenant (to search for leaked values). */
export async function auditText(g: DemoGateway, tenant = 'acme'): Promise<string> {
  const rows = await storedRows<{ record: string }>(
    g,
    'SELECT record FROM audit_records WHERE tenant = ?',
    tenant,
  );
  return rows.map((r) => r.record).join('\n');
}

/** A row of the leases table. */
export interface LeaseRow {
  id: string;
  holder: string;
  status: string;
  record: string;
}

const LEASES = 'SELECT id, holder, status, record FROM leases';

/** The leases table's rows (all tenants) of an in-process gateway. */
export function leaseRows(g: DemoGateway): Promise<LeaseRow[]> {
  return storedRows<LeaseRow>(g, LEASES);
}

/** The leases table's rows (all tenants) of data directory `dataDir`'s database, from outside. */
export function leaseRowsOf(dataDir: string): Promise<LeaseRow[]> {
  return storedRowsOf<LeaseRow>(dataDir, LEASES);
}

/** The leases of invocations of data directory `dataDir`'s database, from outside. */
export async function invocationLeasesOf(dataDir: string): Promise<LeaseRow[]> {
  return (await leaseRowsOf(dataDir)).filter((l) => l.holder.startsWith('invocation/'));
}

const CGROUP_ROOT = '/sys/fs/cgroup';
const CGROUP_CONTROLLERS = ['memory', 'cpu', 'cpuacct', 'pids', 'freezer'];

/**
 * The cgroup directories named `name` anywhere under the `gatehouse` parent of each v1 hierarchy
 * (`gatehouse/<name>` or `gatehouse/<instance>/<name>`), and under `gatehouse` on v2.
 */
export function cgroupDirsNamed(name: string): string[] {
  return cgroupDirsWhere((e) => e === name);
}

/** The cgroup directories whose name starts with `prefix`, where {@link cgroupDirsNamed} looks. */
export function cgroupDirsStartingWith(prefix: string): string[] {
  return cgroupDirsWhere((e) => e.startsWith(prefix));
}

function cgroupDirsWhere(matches: (name: string) => boolean): string[] {
  const found: string[] = [];
  const roots = [
    ...CGROUP_CONTROLLERS.map((c) => join(CGROUP_ROOT, c, 'gatehouse')),
    join(CGROUP_ROOT, 'gatehouse'),
  ];
  const walk = (dir: string, depth: number): void => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e);
      let isDir = false;
      try {
        isDir = statSync(path).isDirectory();
      } catch {
        continue;
      }
      if (!isDir) continue;
      if (matches(e)) found.push(path);
      else if (depth > 0) walk(path, depth - 1);
    }
  };
  for (const root of roots) walk(root, 2);
  return found;
}

/** Live processes (pid and command line) whose command line contains `text`, from /proc. */
export function processesMatching(text: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(join('/proc', entry, 'cmdline'), 'utf8')
        .split('\0')
        .join(' ');
    } catch {
      continue;
    }
    if (cmdline.includes(text)) found.push({ pid: Number(entry), cmdline: cmdline.trim() });
  }
  return found;
}
