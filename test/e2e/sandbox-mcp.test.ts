import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive } from '../../src/mcp/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { leaseRows } from '../helpers/sandbox-tools.js';
import { processTree } from '../helpers/processes.js';
import { requireInTest } from '../helpers/prerequisites.js';

let g: DemoGateway;
let serverId: string;

beforeAll(async () => {
  g = await startDemoGateway();
  serverId = (await g.gateway.mcp.list('acme')).find((s) => s.name === 'everything')!.id;
});
afterAll(async () => {
  await g?.close();
});

/** The processes below `pid` (children, grandchildren…). */
const descendants = (pid: number): number[] =>
  processTree(pid)
    .slice(1)
    .map((p) => p.pid);

/** True while the process exists and is not a zombie. */
function running(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** The cgroup v1 path of a process in the hierarchy of `controller`. */
function cgroupOf(pid: number, controller: string): string {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes(controller));
  return line!.split(':')[2]!;
}

function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'))!;
  return Number(line.split(/\s+/)[1]);
}

describe('stdio MCP servers in sandbox leases', () => {
  it('runs server-everything in bubblewrap as the sandbox user, in its own pid namespace, holding a lease', async (ctx) => {
    requireInTest(ctx, 'the Linux sandbox', g.gateway.execution.sandboxProblem);
    const server = (await g.gateway.mcp.get('acme', serverId)).server;
    expect(server.sandboxed).toBe(true);
    expect(server.state).toBe('active');

    const r = await g.invoke(
      g.tokens.agent,
      'sandboxed-echo-1',
      call('everything/echo', { message: 'from the sandbox' }),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status, JSON.stringify(r.body.error)).toBe('observed');
    expect(JSON.stringify(r.body.output)).toContain('Echo: from the sandbox');

    const pid = await g.gateway.mcp.connectionPid('acme', serverId);
    expect(pid).not.toBeNull();
    expect(uidOf(pid!)).toBe(65534);
    const inner = descendants(pid!);
    expect(inner.length).toBeGreaterThan(0);
    for (const p of inner) expect(uidOf(p)).toBe(65534);
    const node = inner.find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('node'));
    expect(node).toBeDefined();
    expect(readlinkSync(`/proc/${node}/ns/pid`)).not.toBe(readlinkSync('/proc/self/ns/pid'));
    expect(readlinkSync(`/proc/${node}/ns/net`)).not.toBe(readlinkSync('/proc/self/ns/net'));

    const held = (await leaseRows(g)).filter((l) => l.holder === `mcp/${serverId}`);
    expect(held.filter((l) => l.status === 'active')).toHaveLength(1);
    // Its own cgroup, named by the lease, with the lease's share of the mcp-upstreams pool.
    const memory = cgroupOf(node!, 'memory');
    expect(memory).toMatch(new RegExp(`/${held.find((l) => l.status === 'active')!.id}$`));
    expect(cgroupOf(node!, 'pids')).toBe(memory);
    const limit = Number(
      readFileSync(`/sys/fs/cgroup/memory${memory}/memory.limit_in_bytes`, 'utf8'),
    );
    expect(limit).toBe(256 * 2 ** 20);
    expect(Number(readFileSync(`/sys/fs/cgroup/pids${memory}/pids.max`, 'utf8'))).toBeGreaterThan(
      0,
    );

    await g.gateway.mcp.retire('acme', serverId, 'admin');
    // Orphaned inner processes are reaped by the host's init; a zombie no longer runs.
    const gone = async (p: number): Promise<boolean> => {
      for (let i = 0; i < 100 && running(p); i++) await new Promise((r) => setTimeout(r, 20));
      return !running(p);
    };
    for (const p of [pid!, ...inner]) expect(await gone(p), `process ${p}`).toBe(true);
    const after = (await leaseRows(g)).filter((l) => l.holder === `mcp/${serverId}`);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((l) => l.status === 'released')).toBe(true);
    expect(existsSync(`/sys/fs/cgroup/memory${memory}`)).toBe(false);
  });

  it('closing the gateway ends the processes of a sandboxed server', async (ctx) => {
    requireInTest(ctx, 'the Linux sandbox', g.gateway.execution.sandboxProblem);
    const entry = (await g.gateway.mcp.get('acme', serverId)).server.transport;
    const again = await g.gateway.mcp.register('acme', 'admin', {
      name: 'everything-again',
      transport: entry,
    });
    await g.gateway.mcp.verify('acme', again.id, 'admin');
    const pid = await g.gateway.mcp.connectionPid('acme', again.id);
    expect(pid).not.toBeNull();
    const inner = descendants(pid!);
    const node = inner.find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('node'))!;
    const memory = cgroupOf(node, 'memory');
    await g.stop();
    for (const p of [pid!, ...inner]) {
      for (let i = 0; i < 100 && running(p); i++) await new Promise((r) => setTimeout(r, 20));
      expect(running(p), `process ${p}`).toBe(false);
    }
    expect(existsSync(`/sys/fs/cgroup/memory${memory}`)).toBe(false);
  });
});

describe('without a sandbox', () => {
  it('runs stdio servers directly and records sandboxed: false', async () => {
    const plain = await startDemoGateway({ sandbox: { enabled: false } });
    try {
      const s = (await plain.gateway.mcp.list('acme')).find((x) => x.name === 'everything')!;
      expect(s.sandboxed).toBe(false);
      expect(s.state).toBe('active');
      const r = await plain.invoke(
        plain.tokens.agent,
        'plain-echo-1',
        call('everything/echo', { message: 'direct' }),
      );
      expect(r.body.status, JSON.stringify(r.body.error)).toBe('observed');
      expect(JSON.stringify(r.body.output)).toContain('Echo: direct');
    } finally {
      await plain.close();
    }
  });
});
