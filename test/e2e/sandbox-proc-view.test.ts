import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

/** What a tool can read of how it was set up: its mounts, and pid 1's environment and directory. */
const SCRIPT = [
  'cat /proc/self/mountinfo',
  'echo --',
  "tr '\\0' '\\n' </proc/1/environ",
  'echo --',
  'readlink /proc/1/cwd',
].join('\n');

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

/** Runs SCRIPT in demo/sh; its output, the call's lease id and the mount points on the host. */
async function look(gateway: DemoGateway): Promise<{ seen: string; leaseId: string }> {
  const res = await gateway.invoke(
    gateway.tokens.agent,
    'proc-view',
    call('demo/sh', { script: SCRIPT }),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const r: InvocationRecord = res.body;
  expect(r.status).toBe('observed');
  const seen = (r.output as { stdout: string }).stdout;
  // The script ran and saw its mounts: /workspace and the egress socket among them.
  expect(seen).toMatch(/ \/workspace /);
  expect(seen).toMatch(/ \/run\/gatehouse\/egress\.sock /);
  return { seen, leaseId: String((r.lease as { id: string }).id) };
}

/** The host paths a tool must not learn: the gateway's, its data and sandbox directories. */
function hostPaths(gateway: DemoGateway): string[] {
  return [gateway.sandboxRoot, gateway.dataDir, process.cwd()];
}

describe('what a sandboxed call sees of the host in /proc', () => {
  it('shows neither the sandbox directory, the data directory, the lease id nor the gateway directory', async () => {
    g = await startDemoGateway();
    const { seen, leaseId } = await look(g);
    for (const secret of [...hostPaths(g), leaseId]) expect(seen).not.toContain(secret);
    // The socket sits on a tmpfs of its own, named after the gateway, not on the host's disk.
    expect(seen).toMatch(
      / \/[A-Za-z0-9_-]+\/proxy\.sock \/run\/gatehouse\/egress\.sock .* gatehouse-egress /,
    );
  });

  it('with unbounded workspaces (GATEHOUSE_WORKSPACE_MB=0) shows no more than the workspace bind', async () => {
    g = await startDemoGateway({ sandbox: { workspaceMb: 0 } });
    const { seen, leaseId } = await look(g);
    // An unbounded workspace is a directory of the host's disk: its bind names it (mountinfo
    // shows a bind's path in its filesystem). Nothing else does.
    const others = seen
      .split('\n')
      .filter((line) => !/ \/workspace /.test(line))
      .join('\n');
    for (const secret of [...hostPaths(g), leaseId]) expect(others).not.toContain(secret);
  });

  it('leaves none of its tmpfs (egress sockets, browser and desktop scratch, warm pool) mounted once the gateway closes; a warm call shows no more than a cold one', async () => {
    g = await startDemoGateway({
      sandbox: { warm: { size: 1, refill: 1, memoryMb: 512, egress: true } },
    });
    const pool = g.gateway.execution.warmPool!;
    for (let i = 0; i < 500 && pool.ready < 1; i++) await sleep(20);
    const { seen, leaseId } = await look(g);
    expect(pool.counts.taken).toBe(1);
    for (const secret of [...hostPaths(g), leaseId]) expect(seen).not.toContain(secret);
    // The warm sandbox's relay socket sits on the pool's tmpfs, its workspace on one of its own.
    expect(seen).toMatch(
      / \/[A-Za-z0-9_-]+\/egress\.sock \/run\/gatehouse\/egress\.sock .* gatehouse-warm /,
    );
    expect(seen).toMatch(/ \/ \/workspace .* gatehouse-workspace /);
    const dirs = ['egress', 'browser', 'desktop', 'warm'].map((d) => `${g!.sandboxRoot}/${d}`);
    for (const dir of dirs) expect(mountPoints()).toContain(dir);
    await g.stop();
    for (const dir of dirs) expect(mountPoints()).not.toContain(dir);
  });
});

function mountPoints(): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '');
}
