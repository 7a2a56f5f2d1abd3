import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Discovery, McpBinding, McpServerRecord, McpStore } from '../../src/mcp/index.js';
import { checkCall } from '../../src/mcp/call-check.js';
import { UpstreamView } from '../../src/mcp/upstream-view.js';
import { SqliteDatabase, SqliteMcpStore } from '../../src/storage/index.js';

const at = '2026-01-01T00:00:00.000Z';
const noLedger = { audit: [], events: [] };
const digest = (c: string) => c.repeat(64);

const server = (id: string, state: McpServerRecord['state']): McpServerRecord => ({
  id,
  tenant: 'acme',
  name: id,
  transport: { type: 'stdio', command: 'node', args: [`${id}.js`] },
  identity: digest(id.slice(-1)),
  state,
  stateReason: state === 'degraded' ? 'probes failed' : null,
  version: 1,
  registeredBy: 'm-1',
  createdAt: at,
  updatedAt: at,
});
const binding = (serverId: string, tool: string, over: Partial<McpBinding> = {}): McpBinding => ({
  tenant: 'acme',
  serverId,
  tool,
  digest: digest('d'),
  approved: { name: tool, inputSchema: { type: 'object' } },
  descriptor: { id: `${serverId}.${tool}`, version: '1.0.0' },
  class: 'read',
  state: 'bound',
  change: null,
  boundBy: 'm-1',
  at,
  ...over,
});
const discovery = (serverId: string, tools: [string, string][]): Discovery => ({
  serverId,
  tenant: 'acme',
  tools: tools.map(([name, d]) => ({ tool: { name, inputSchema: { type: 'object' } }, digest: d })),
  resources: [],
  prompts: [],
  at,
});

/** The store, counting every read made through it. */
function counting(store: McpStore): { store: McpStore; reads: () => number } {
  let n = 0;
  const reading = new Set(['get', 'list', 'listInStates', 'discovery', 'bindings', 'binding']);
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (reading.has(String(key))) n += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, reads: () => n };
}

let dir: string;
let db: SqliteDatabase;
let store: SqliteMcpStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-upstream-view-'));
  db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  store = new SqliteMcpStore(db);
  // s1 active with many tools: bound, unbound, bound to another version, changed or gone
  // upstream; s2 degraded; s3 verified (not active).
  const many = Array.from({ length: 20 }, (_, i) => `t${i}`);
  await store.create(server('s1', 'active'), noLedger);
  await store.update(
    {
      tenant: 'acme',
      serverId: 's1',
      discovery: discovery('s1', [
        ...many.map((t): [string, string] => [t, digest('d')]),
        ['unbound', digest('d')],
        ['other', digest('d')],
        ['changed', digest('e')],
      ]),
      bindings: [
        ...many.map((t) => binding('s1', t)),
        binding('s1', 'unbound', {
          state: 'unbound',
          change: {
            digest: digest('e'),
            changes: [{ field: 'description', old: 'a', new: 'b' }],
            at,
          },
        }),
        binding('s1', 'other', { descriptor: { id: 's1.other', version: '2.0.0' } }),
        binding('s1', 'changed'),
        binding('s1', 'gone'),
      ],
    },
    noLedger,
  );
  for (const [id, state] of [
    ['s2', 'degraded'],
    ['s3', 'verified'],
  ] as const) {
    await store.create(server(id, state), noLedger);
    await store.update(
      {
        tenant: 'acme',
        serverId: id,
        discovery: discovery(id, [['t0', digest('d')]]),
        bindings: [binding(id, 't0')],
      },
      noLedger,
    );
  }
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const cases: [string, string, { id: string; version: string }][] = [
  ...Array.from({ length: 20 }, (_, i): [string, string, { id: string; version: string }] => [
    's1',
    `t${i}`,
    { id: `s1.t${i}`, version: '1.0.0' },
  ]),
  ['s1', 'unbound', { id: 's1.unbound', version: '1.0.0' }],
  ['s1', 'other', { id: 's1.other', version: '1.0.0' }],
  ['s1', 'changed', { id: 's1.changed', version: '1.0.0' }],
  ['s1', 'gone', { id: 's1.gone', version: '1.0.0' }],
  ['s1', 'never-bound', { id: 's1.never-bound', version: '1.0.0' }],
  ['s2', 't0', { id: 's2.t0', version: '1.0.0' }],
  ['s3', 't0', { id: 's3.t0', version: '1.0.0' }],
  ['s9', 't0', { id: 's9.t0', version: '1.0.0' }],
];

describe('UpstreamView', () => {
  it('answers each check as checkCall does', async () => {
    const view = new UpstreamView({ store, tenant: 'acme', unreachable: () => false });
    const codes = new Set<string>();
    for (const [serverId, tool, d] of cases) {
      const expected = await checkCall(store, 'acme', serverId, tool, d);
      expect(await view.check(serverId, tool, d)).toEqual(expected);
      codes.add(expected.ok ? 'ok' : expected.code);
    }
    // Every answer checkCall can give is among the cases.
    expect([...codes].sort()).toEqual(
      [
        'ok',
        'BINDING_MISMATCH',
        'SERVER_DEGRADED',
        'SERVER_NOT_ACTIVE',
        'SERVER_NOT_FOUND',
        'TOOL_GONE',
        'TOOL_NOT_BOUND',
        'TOOL_UNBOUND',
      ].sort(),
    );
  });

  it('reads the servers once and an active server’s bindings and discovery once, however many tools are asked about', async () => {
    const c = counting(store);
    const view = new UpstreamView({ store: c.store, tenant: 'acme', unreachable: () => false });
    await Promise.all(cases.map(([s, t, d]) => view.isBound(s, t, d)));
    for (const [s, t, d] of cases) await view.isBound(s, t, d);
    // list; bindings and discovery of s1, the only active server.
    expect(c.reads()).toBe(3);

    const perCall = counting(store);
    for (const [s, t, d] of cases) await checkCall(perCall.store, 'acme', s, t, d);
    expect(perCall.reads()).toBeGreaterThan(3 * 20);
  });

  it('asks the pool about reachability at each check', async () => {
    let down = false;
    const view = new UpstreamView({ store, tenant: 'acme', unreachable: () => down });
    const ref = { id: 's1.t0', version: '1.0.0' };
    expect(await view.isCallable('s1', 't0', ref)).toBe(true);
    down = true;
    expect(await view.isCallable('s1', 't0', ref)).toBe(false);
    expect(await view.isBound('s1', 't0', ref)).toBe(true);
  });
});
