import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { BwrapSandbox, DEFAULT_PATH, EGRESS_PROXY_URL } from '../../src/sandbox/index.js';
import { LIMITS, hostProcesses, run, sh, startSandbox } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';

const fixture = await startSandbox('bwrap');
const cgroupDir = (id: string) => `/sys/fs/cgroup/pids/${fixture.cgroupParent}/${id}`;

const noSandbox = skipWithout(
  'the Linux sandbox (bubblewrap, seccomp, cgroups)',
  fixture.unavailable,
);

describe.skipIf(noSandbox)('BwrapSandbox', () => {
  const f: SandboxFixture = fixture;
  afterAll(() => f.close());

  it('runs a program: exit code, stdout and stderr apart, started', async () => {
    const { result, stdout, stderr } = await sh(f, 'echo hi; echo err >&2; exit 3');
    expect(result.exitCode).toBe(3);
    expect(result.signal).toBeNull();
    expect(result.started).toBe(true);
    expect(result.killed).toBeNull();
    expect(stdout).toBe('hi\n');
    expect(stderr).toBe('err\n');
    expect(result.usage.maxMemoryBytes).toBeGreaterThan(0);
    expect(result.usage.cpuMs).not.toBeNull();
  });

  it('writes stdin, then closes it', async () => {
    const { result, stdout } = await run(f, ['/bin/cat'], { stdin: 'line one\nline two\n' });
    expect(result.exitCode).toBe(0);
    expect(stdout).toBe('line one\nline two\n');
  });

  it('passes argv through exactly, whatever it contains (no shell built from it)', async () => {
    const argv = [
      "it's",
      '"$(id)"',
      '`id`',
      '$nl',
      'two\nlines',
      'back\\slash',
      '',
      ' spaced out ',
      '; rm -rf / #',
      '--',
      'ünïcødé ✓',
    ];
    const { result, stdout } = await run(f, ['/usr/bin/printf', '%s\\0', ...argv]);
    expect(result.exitCode).toBe(0);
    expect(stdout.split('\0').slice(0, -1)).toEqual(argv);
  });

  it("sees exactly the spec's environment, plus PWD; nothing of the gateway's", async () => {
    process.env.GATEHOUSE_CANARY = 'gateway-secret';
    try {
      const { stdout } = await run(f, ['/usr/bin/env'], {
        env: { FOO: 'bar', PATH: '/usr/bin:/bin' },
      });
      expect(stdout.trim().split('\n').sort()).toEqual([
        'FOO=bar',
        'PATH=/usr/bin:/bin',
        'PWD=/workspace',
      ]);
      const noPath = await run(f, ['/usr/bin/env'], { env: {} });
      expect(noPath.stdout.trim().split('\n').sort()).toEqual([
        `PATH=${DEFAULT_PATH}`,
        'PWD=/workspace',
      ]);
    } finally {
      delete process.env.GATEHOUSE_CANARY;
    }
  });

  it('works in /workspace, which is the host workspace', async () => {
    const workspace = await f.workspace();
    const { result, stdout } = await sh(f, 'pwd; echo made > out.txt', { workspace });
    expect(result.exitCode).toBe(0);
    expect(stdout).toBe('/workspace\n');
    expect(await readdir(workspace)).toEqual(['out.txt']);
  });

  it('writes files into the private root, readable, never on the host disk', async () => {
    const workspace = await f.workspace();
    const files = [1, 2, 3, 4, 5].map((n) => ({
      path: `/run/secrets/s${n}`,
      content: `secret-${n}`,
      mode: 0o400,
    }));
    const { result, stdout } = await sh(
      f,
      'for n in 1 2 3 4 5; do cat /run/secrets/s$n; echo; done; stat -c %a /run/secrets/s1; ls -A /workspace',
      { workspace, files },
    );
    expect(result.exitCode).toBe(0);
    expect(stdout).toBe('secret-1\nsecret-2\nsecret-3\nsecret-4\nsecret-5\n400\n');
    const one = await sh(f, 'cat /run/secrets/token', {
      files: [{ path: '/run/secrets/token', content: Buffer.from('tok'), mode: 0o440 }],
    });
    expect(one.stdout).toBe('tok');
  });

  it('mounts read-only mounts read-only', async () => {
    const shared = await f.privateDir();
    await chmod(shared, 0o755);
    await writeFile(join(shared, 'data.txt'), 'shared data');
    const { stdout } = await sh(
      f,
      'cat /opt/shared/data.txt; echo; echo x > /opt/shared/data.txt || echo refused',
      { readOnlyMounts: [{ host: shared, sandbox: '/opt/shared' }] },
    );
    expect(stdout).toMatch(/^shared data\n.*refused\n$/s);
  });

  it('reports a setup failure as not started (nothing ran)', async () => {
    const { result, stderr } = await run(f, ['true'], {
      readOnlyMounts: [{ host: '/nonexistent/gatehouse', sandbox: '/opt/missing' }],
    });
    expect(result.started).toBe(false);
    expect(result.exitCode).not.toBe(0);
    expect(stderr).toContain('bwrap');
    const missing = await run(f, ['/usr/bin/no-such-program']);
    expect(missing.result.started).toBe(false);
  });

  it('refuses a malformed spec before anything runs', async () => {
    for (const bad of [
      { id: '../escape' },
      { workspace: 'relative/path' },
      { files: [{ path: '/workspace/leak', content: 'x', mode: 0o600 }] },
      { readOnlyMounts: [{ host: '/usr', sandbox: '/proc' }] },
      { argv: [] },
      { env: { 'A=B': 'x' } },
    ]) {
      const err = await run(f, ['true'], bad).catch((e: unknown) => e);
      expect(isGatehouseError(err, 'INVALID_INPUT'), JSON.stringify(bad)).toBe(true);
    }
  });

  it('kills the whole run at the timeout, within about a second, and leaves nothing', async () => {
    const id = `timeout-${process.pid}`;
    const t0 = Date.now();
    const running = sh(f, 'sleep 31.25 & sleep 31.25', {
      id,
      limits: { ...LIMITS, timeoutMs: 2_000 },
    });
    // Poll: on a loaded machine the run takes a while to start.
    for (let i = 0; i < 30 && hostProcesses('sleep 31.25').length < 2; i++) await sleep(50);
    expect(hostProcesses('sleep 31.25').length).toBeGreaterThanOrEqual(2);
    const { result } = await running;
    expect(result.killed).toBe('timeout');
    expect(result.started).toBe(true);
    expect(result.signal).toBe('SIGKILL');
    expect(Date.now() - t0).toBeLessThan(8_000);
    expect(existsSync(cgroupDir(id))).toBe(false);
    expect(hostProcesses('sleep 31.25')).toEqual([]);
  });

  it('kills the run when the signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const id = `abort-${process.pid}`;
    const { result } = await sh(f, 'sleep 32.5', { id, signal: controller.signal });
    expect(result.killed).toBe('abort');
    expect(result.durationMs).toBeLessThan(8_000);
    expect(existsSync(cgroupDir(id))).toBe(false);
    expect(hostProcesses('sleep 32.5')).toEqual([]);
    const already = await sh(f, 'echo never', { signal: AbortSignal.abort() });
    expect(already.result).toMatchObject({ started: false, killed: 'abort' });
    expect(already.stdout).toBe('');
  });

  it('kills a detached double-forked child when the program exits', async () => {
    const id = `detach-${process.pid}`;
    const { result, stdout } = await sh(
      f,
      '(setsid sleep 33.75 </dev/null >/dev/null 2>&1 &); echo detached',
      { id },
    );
    expect(result.exitCode).toBe(0);
    expect(stdout).toBe('detached\n');
    expect(existsSync(cgroupDir(id))).toBe(false);
    expect(hostProcesses('sleep 33.75')).toEqual([]);
  });

  it('runs sandboxes side by side', async () => {
    const runs = await Promise.all([1, 2, 3, 4, 5].map((n) => sh(f, `sleep 0.2; echo run-${n}`)));
    expect(runs.map((r) => r.stdout)).toEqual([1, 2, 3, 4, 5].map((n) => `run-${n}\n`));
  });

  it('reaps processes and cgroups left by a crash, and only those', async () => {
    const id = `orphan-${process.pid}`;
    const dirs = ['pids', 'memory'].map((c) => `/sys/fs/cgroup/${c}/${f.cgroupParent}/${id}`);
    for (const dir of dirs) await mkdir(dir, { recursive: true });
    const orphan = spawn('sleep', ['1001.5'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => orphan.once('exit', resolve));
    for (const dir of dirs) await writeFile(join(dir, 'cgroup.procs'), String(orphan.pid));
    expect(await f.sandbox.reapOrphans()).toEqual([id]);
    await exited;
    for (const dir of dirs) expect(existsSync(dir)).toBe(false);
    expect(hostProcesses('sleep 1001.5')).toEqual([]);
    expect(await f.sandbox.reapOrphans()).toEqual([]);
    // The warm slots of this sandbox survive a reap and still serve runs.
    expect((await sh(f, 'echo still')).stdout).toBe('still\n');
  });

  it('never reaps the runs of another gateway (each has its own cgroup parent)', async () => {
    const stateDir = await f.privateDir();
    const other = await BwrapSandbox.start({ stateDir });
    try {
      const id = `other-gateway-${process.pid}`;
      const running = sh(f, 'sleep 0.5; echo survived', { id });
      await sleep(200);
      expect(await other.reapOrphans()).not.toContain(id);
      expect((await running).stdout).toBe('survived\n');
    } finally {
      await other.close();
    }
  });

  it("reaps, when asked by id, a run another gateway of this host left (a dead node's), and no other", async () => {
    const stateDir = await f.privateDir();
    const survivor = await BwrapSandbox.start({ stateDir, cgroupParent: `${f.cgroupParent}-b` });
    try {
      const id = `left-${process.pid}`;
      const running = sh(f, 'sleep 1002.5', { id });
      const dirs = ['pids', 'memory'].map((c) => `/sys/fs/cgroup/${c}/${f.cgroupParent}/${id}`);
      for (let i = 0; i < 200 && hostProcesses('sleep 1002.5').length === 0; i++) await sleep(20);
      expect(hostProcesses('sleep 1002.5').length).toBeGreaterThan(0);
      expect(await survivor.reapLeftByOthers([`absent-${process.pid}`])).toEqual([]);
      expect(await survivor.reapLeftByOthers([id])).toEqual([id]);
      expect(hostProcesses('sleep 1002.5')).toEqual([]);
      for (const dir of dirs) expect(existsSync(dir)).toBe(false);
      expect((await running).result.exitCode).not.toBe(0);
      // Its own runs are not "left by others".
      const own = sh({ ...f, sandbox: survivor }, 'sleep 0.3; echo own', {
        id: `own-${process.pid}`,
      });
      await sleep(100);
      expect(await survivor.reapLeftByOthers([`own-${process.pid}`])).toEqual([]);
      expect((await own).stdout).toBe('own\n');
    } finally {
      await survivor.close();
    }
  });

  it('gives egress through a forwarder to the proxy socket, with the proxy variables', async () => {
    const dir = await f.privateDir();
    await chmod(dir, 0o711);
    const socketPath = join(dir, 'egress.sock');
    const requests: string[] = [];
    const server: Server = createServer((socket) => {
      socket.once('data', (data) => {
        requests.push(data.toString().split('\r\n')[0] ?? '');
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nproxied\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const { result, stdout } = await sh(
        f,
        "env | grep -i proxy | sort; /usr/bin/python3 -c \"import urllib.request as u; print(u.urlopen('http://example.test/path').read().decode(), end='')\"",
        { egressSocket: socketPath, env: { PATH: '/usr/bin:/bin', NO_PROXY: '*' } },
      );
      expect(result.exitCode).toBe(0);
      expect(stdout).toBe(
        [
          `HTTPS_PROXY=${EGRESS_PROXY_URL}`,
          `HTTP_PROXY=${EGRESS_PROXY_URL}`,
          `http_proxy=${EGRESS_PROXY_URL}`,
          `https_proxy=${EGRESS_PROXY_URL}`,
          'proxied\n',
        ].join('\n'),
      );
      expect(requests).toEqual(['GET http://example.test/path HTTP/1.1']);
    } finally {
      server.close();
    }
    const none = await sh(f, 'env | grep -ci proxy; test -e /run/gatehouse || echo no-socket');
    expect(none.stdout).toBe('0\nno-socket\n');
  });

  it('with egress as without: a program that cannot be executed did not start; one that ran and exited 127 did', async () => {
    const dir = await f.privateDir();
    await chmod(dir, 0o711);
    const socketPath = join(dir, 'egress.sock');
    const server: Server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      for (const egressSocket of [null, socketPath]) {
        const how = egressSocket === null ? 'without egress' : 'with egress';
        for (const [argv, reason] of [
          [['no-such-program'], 'No such file or directory'],
          [['/usr/bin/no-such-program', 'arg'], 'No such file or directory'],
          [['/etc/passwd'], 'Permission denied'],
          [['/usr'], 'Permission denied'],
        ] as const) {
          const r = await run(f, [...argv], { egressSocket });
          expect(r.result.started, `${argv[0]} ${how}`).toBe(false);
          expect(r.result.exitCode, `${argv[0]} ${how}`).not.toBe(0);
          expect(r.stderr, `${argv[0]} ${how}`).toContain(`execvp ${argv[0]}: ${reason}`);
        }
        // The program ran: its own 127 is its exit code, even when it tries every descriptor
        // the sandbox can reach to say otherwise.
        const ran = await sh(
          f,
          'for d in /proc/[0-9]*/fd/*; do echo "gatehouse: not started" >"$d"; done 2>/dev/null; exit 127',
          { egressSocket },
        );
        expect(ran.result.started, how).toBe(true);
        expect(ran.result.exitCode, how).toBe(127);
        const ok = await run(f, ['true'], { egressSocket });
        expect(ok.result, how).toMatchObject({ started: true, exitCode: 0 });
      }
    } finally {
      server.close();
    }
  });

  it('close() is safe to call twice and refuses runs after', async () => {
    const other = await startSandbox('close');
    try {
      await other.sandbox.close();
      await other.sandbox.close();
      await expect(run(other, ['true'])).rejects.toThrow(/after close/);
    } finally {
      await other.close();
    }
  });
});

// A run whose spawner dies takes its sandbox with it.
describe.skipIf(noSandbox)('the spawner', () => {
  it('takes its sandboxes with it when it dies', async () => {
    const f = await startSandbox('spawner');
    try {
      const running = sh(f, 'sleep 34.125');
      await sleep(500);
      const spawner = (f.sandbox as unknown as { spawner: { child: { pid: number } } }).spawner;
      process.kill(spawner.child.pid, 'SIGKILL');
      const { result } = await running;
      expect(result.exitCode).toBeNull();
      expect(result.started).toBe(true);
      await sleep(100);
      expect(hostProcesses('sleep 34.125')).toEqual([]);
      // The next run starts a new spawner.
      expect((await sh(f, 'echo again')).stdout).toBe('again\n');
    } finally {
      await f.close();
    }
  });
});
