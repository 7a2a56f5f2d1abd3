import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxSpec, WarmPool } from '../../src/sandbox/index.js';
import { ErrorCode, GatehouseError } from '../../src/core/index.js';
import { LIMITS, SANDBOX_USER, sh, startSandbox } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';

const poolDir = await mkdtemp(join(tmpdir(), 'gatehouse-warm-pool-'));
await chmod(poolDir, 0o711);
const fixture = await startSandbox('warm', {
  warmPool: {
    size: 2,
    refill: 2,
    memoryBytes: 256 * 2 ** 20,
    egress: true,
    dir: join(poolDir, 'w'),
    workspaceBytes: 4 * 2 ** 20,
  },
});
const noSandbox = skipWithout(
  'the Linux sandbox (bubblewrap, seccomp, cgroups v1)',
  fixture.unavailable ?? (fixture.sandbox.warm === null ? 'no warm pool (cgroup v2)' : null),
);

/** Waits until the pool has `n` sandboxes waiting. */
async function filled(pool: WarmPool, n: number): Promise<void> {
  for (let i = 0; i < 500 && pool.ready < n; i++) await sleep(20);
  expect(pool.ready).toBeGreaterThanOrEqual(n);
}

describe.skipIf(noSandbox)('the warm sandbox pool', () => {
  const f: SandboxFixture = fixture;
  const pool = f.sandbox.warm!;
  let proxy: Server;
  let socketPath: string;
  const requests: string[] = [];
  afterAll(async () => {
    proxy?.close();
    await f.close();
    await rm(poolDir, { recursive: true, force: true });
  });

  /** A call's spec: with egress (the pool's shape) to a fake proxy, fresh workspace. */
  async function spec(extra: Partial<SandboxSpec> = {}): Promise<Partial<SandboxSpec>> {
    if (proxy === undefined) {
      const dir = await f.privateDir();
      await chmod(dir, 0o711);
      socketPath = join(dir, 'egress.sock');
      proxy = createServer((socket) =>
        socket.once('data', (data) => {
          requests.push(data.toString().split('\r\n')[0] ?? '');
          socket.end('HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nproxied\n');
        }),
      );
      await new Promise<void>((resolve) => proxy.listen(socketPath, resolve));
    }
    return { egressSocket: socketPath, freshWorkspace: true, ...extra };
  }

  const probe =
    "echo out; echo err >&2; env | sort; id; pwd; grep -E '^(Seccomp|NoNewPrivs|CapEff)' /proc/self/status; ls -A / /workspace /tmp; " +
    "/usr/bin/python3 -c \"import urllib.request as u; print(u.urlopen('http://example.test/p').read().decode(), end='')\"; exit 3";

  it('gives a warm call the output, exit code and environment a cold call gets; the timeout counts from take', async () => {
    await filled(pool, 2);
    const taken = pool.counts.taken;
    const warm = await sh(
      f,
      probe,
      await spec({ env: { PATH: '/usr/bin:/bin', NO_PROXY: '*', A: "it's\nme" } }),
    );
    expect(pool.counts.taken).toBe(taken + 1);
    const cold = await sh(
      f,
      probe,
      await spec({
        env: { PATH: '/usr/bin:/bin', NO_PROXY: '*', A: "it's\nme" },
        freshWorkspace: false,
      }),
    );
    expect(pool.counts.taken).toBe(taken + 1);
    expect(warm.stdout).toBe(cold.stdout);
    expect(warm.stderr).toBe(cold.stderr);
    expect(warm.stdout).toContain("A=it's\n");
    expect(warm.stdout).toContain('Seccomp:\t2');
    expect(warm.stdout).toMatch(/proxied\n$/);
    expect(requests.slice(-2)).toEqual([
      'GET http://example.test/p HTTP/1.1',
      'GET http://example.test/p HTTP/1.1',
    ]);
    for (const r of [warm.result, cold.result]) {
      expect(r.exitCode).toBe(3);
      expect(r.started).toBe(true);
      expect(r.killed).toBeNull();
    }
    // stdin, and a program that is not there (a setup failure: nothing started), as cold.
    await filled(pool, 1);
    const read = await sh(f, 'cat', await spec({ stdin: 'in\n' }));
    expect(read.stdout).toBe('in\n');
    await filled(pool, 1);
    const missing = await sh(f, 'x', await spec({ argv: ['no-such-program'] }));
    const coldMissing = await sh(
      f,
      'x',
      await spec({ argv: ['no-such-program'], freshWorkspace: false }),
    );
    // Warm, the stub looks it up first; cold, the egress forwarder's shell does: nothing ran,
    // and both say so alike.
    for (const r of [missing, coldMissing]) {
      expect(r.result.exitCode).toBe(127);
      expect(r.result.started).toBe(false);
    }
    expect(missing.stderr).toMatch(/no-such-program.*No such file or directory/);
    expect(coldMissing.stderr).toBe(missing.stderr);
    // A shell builtin is no program: exec cannot run it, warm or cold.
    await filled(pool, 1);
    const builtin = await sh(f, 'x', await spec({ argv: ['cd'] }));
    const coldBuiltin = await sh(f, 'x', await spec({ argv: ['cd'], freshWorkspace: false }));
    for (const r of [builtin, coldBuiltin]) expect(r.result.started).toBe(false);
    // A sandbox that waited longer than the call's timeout still gives the call its whole time.
    await filled(pool, 1);
    await sleep(600);
    const slow = await sh(
      f,
      'sleep 0.3; echo done',
      await spec({ limits: { ...LIMITS, timeoutMs: 500 } }),
    );
    expect(slow.stdout).toBe('done\n');
    const late = await sh(f, 'sleep 5', await spec({ limits: { ...LIMITS, timeoutMs: 300 } }));
    expect(late.result.killed).toBe('timeout');
  });

  it('never lets a call see what an earlier one was given or wrote (secret files, workspace, /tmp)', async () => {
    await filled(pool, 2);
    const writer = await sh(
      f,
      'cat /run/secrets/token; echo w > /workspace/left; echo t > /tmp/left',
      await spec({ files: [{ path: '/run/secrets/token', content: 'sekrit', mode: 0o400 }] }),
    );
    expect(writer.stdout).toBe('sekrit');
    const warmWriter = await sh(
      f,
      'echo w > /workspace/left; echo t > /tmp/left; head -c 5M /dev/zero > /workspace/big || echo bounded',
      await spec(),
    );
    // The warm workspace is bounded as a lease's is.
    expect(warmWriter.stdout).toBe('bounded\n');
    expect(warmWriter.result.exitCode).toBe(0);
    await filled(pool, 1);
    const reader = await sh(
      f,
      'cat /run/secrets/token 2>&1; ls -A /workspace /tmp; echo end',
      await spec(),
    );
    expect(reader.stdout).not.toContain('sekrit');
    expect(reader.stdout).toMatch(/No such file or directory\n\/tmp:\n\n\/workspace:\nend\n$/);
  });

  it('starts a call cold when the pool is exhausted or the call does not fit it', async () => {
    await filled(pool, 2);
    const taken = pool.counts.taken;
    const runs = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => sh(f, `echo ${i}`, await spec())),
    );
    expect(runs.map((r) => r.stdout)).toEqual(['0\n', '1\n', '2\n', '3\n']);
    expect(pool.counts.taken - taken).toBeGreaterThanOrEqual(2);
    expect(pool.counts.taken - taken).toBeLessThan(4);
    const before = pool.counts.taken;
    // No egress (the pool's have it), or an attempt's workspace: cold.
    const offline = await sh(f, 'test -e /run/gatehouse || echo no-socket', {
      freshWorkspace: true,
    });
    expect(offline.stdout).toBe('no-socket\n');
    await sh(f, 'true', await spec({ freshWorkspace: false }));
    expect(pool.counts.taken).toBe(before);
  });

  it('makes a call its on-demand workspace only when it starts cold; one that cannot be made runs nothing', async () => {
    const dir = await f.privateDir();
    await chmod(dir, 0o711);
    const ws = join(dir, 'ws');
    let asked = 0;
    const make = async (): Promise<void> => {
      asked += 1;
      await mkdir(ws, { mode: 0o700 });
      await chown(ws, SANDBOX_USER.uid, SANDBOX_USER.gid);
    };
    await filled(pool, 1);
    const taken = pool.counts.taken;
    const warm = await sh(
      f,
      'ls -A /workspace; echo ok',
      await spec({ workspace: ws, prepareWorkspace: make }),
    );
    expect(pool.counts.taken).toBe(taken + 1);
    expect(warm.stdout).toBe('ok\n');
    expect(asked).toBe(0);
    expect(existsSync(ws)).toBe(false);
    // No egress, not the pool's shape: cold, and its workspace made before it is bound.
    const cold = await sh(f, 'echo w > /workspace/x; echo ok', {
      freshWorkspace: true,
      workspace: ws,
      prepareWorkspace: make,
    });
    expect(cold.stdout).toBe('ok\n');
    expect(asked).toBe(1);
    expect(readFileSync(join(ws, 'x'), 'utf8')).toBe('w\n');
    const id = `t${process.pid}-unmade`;
    await expect(
      sh(f, 'echo ran', {
        id,
        freshWorkspace: true,
        workspace: join(dir, 'never'),
        prepareWorkspace: () =>
          Promise.reject(new GatehouseError(ErrorCode.UNAVAILABLE, 'cannot mount the workspace')),
      }),
    ).rejects.toThrow('cannot mount the workspace');
    for (const controller of ['memory', 'pids', 'cpu'])
      expect(existsSync(`/sys/fs/cgroup/${controller}/${f.cgroupParent}/${id}`)).toBe(false);
  });

  it('discards a waiting sandbox that was tampered with, and the call still runs correctly', async () => {
    const tamperings: ((w: ReturnType<WarmPool['waiting']>[number]) => Promise<void>)[] = [
      // Its process killed.
      (w) => {
        for (const pid of readFileSync(w.slot.cgroup.procsFiles[0]!, 'utf8')
          .split('\n')
          .filter(Boolean))
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // Gone with the one killed before it.
          }
        return Promise.resolve();
      },
      // Its cgroup (one hierarchy's) emptied and removed.
      async (w) => {
        const file = w.slot.cgroup.procsFiles.find((p) => p.includes('/pids/'))!;
        for (const pid of readFileSync(file, 'utf8').split('\n').filter(Boolean))
          await writeFile('/sys/fs/cgroup/pids/cgroup.procs', pid);
        await rmdir(join(file, '..'));
      },
      // Its workspace written to.
      async (w) => writeFile(join(w.workspace, 'planted'), 'x'),
    ];
    for (const tamper of tamperings) {
      await filled(pool, 2);
      const discarded = pool.counts.discarded;
      const victims = pool.waiting();
      for (const w of victims) await tamper(w);
      // Until the kill has landed (its processes have left their cgroup).
      await sleep(50);
      const r = await sh(f, 'ls -A /workspace; echo ok', await spec());
      expect(r.stdout).toBe('ok\n');
      expect(r.result.exitCode).toBe(0);
      expect(pool.counts.discarded).toBeGreaterThanOrEqual(discarded + victims.length);
      for (const w of victims) {
        for (let i = 0; i < 100 && existsSync(w.workspace); i++) await sleep(20);
        expect(existsSync(w.workspace)).toBe(false);
      }
    }
  });

  it('leaves nothing behind when closed: no process, cgroup, mount or directory', async () => {
    const other = await startSandbox('warm-close', {
      warmPool: {
        size: 2,
        refill: 2,
        memoryBytes: 64 * 2 ** 20,
        egress: true,
        dir: join(poolDir, 'c'),
        workspaceBytes: 2 ** 20,
      },
    });
    try {
      await filled(other.sandbox.warm!, 2);
      expect(readFileSync('/proc/self/mounts', 'utf8')).toContain(join(poolDir, 'c'));
      const pids = other.sandbox
        .warm!.waiting()
        .flatMap((w) => readFileSync(w.slot.cgroup.procsFiles[0]!, 'utf8').split('\n'))
        .filter(Boolean);
      // bubblewrap's two, the stub and the forwarder, in each.
      expect(pids.length).toBeGreaterThanOrEqual(8);
      await other.sandbox.close();
      // Killed and gone (a zombie is reaped by its new parent within moments).
      for (const pid of pids) {
        for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await sleep(20);
        expect(existsSync(`/proc/${pid}`)).toBe(false);
      }
      expect(readdirSync(join(poolDir, 'c'))).toEqual([]);
      expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(join(poolDir, 'c'));
      for (const controller of ['memory', 'pids', 'cpu']) {
        const dir = `/sys/fs/cgroup/${controller}/${other.cgroupParent}`;
        expect(
          existsSync(dir)
            ? readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())
            : [],
        ).toEqual([]);
      }
    } finally {
      await other.close();
    }
  });
});
