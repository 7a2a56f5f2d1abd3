import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { closeSync, existsSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import type { ConfinedCommand } from '../../src/sandbox/index.js';
import { LIMITS, startSandbox } from './bwrap-fixture.js';
import type { SandboxFixture } from './bwrap-fixture.js';
import { skipWithout } from '../helpers/prerequisites.js';

const fixture = await startSandbox('confined');
const dir = (controller: string, id: string) =>
  `/sys/fs/cgroup/${controller}/${fixture.cgroupParent}/${id}`;
let counter = 0;

/** Spawns a confined command as the sandbox would be spawned by its caller; collects its output. */
function spawnConfined(
  c: ConfinedCommand,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const fd = openSync(c.seccompPath, 'r');
  const child = spawn(c.file, c.args, {
    env: {},
    stdio: ['ignore', 'pipe', 'pipe', fd, 'pipe'],
    ...(c.user ? { uid: c.user.uid, gid: c.user.gid } : {}),
  });
  closeSync(fd);
  (child.stdio[4] as Writable).end(c.options);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe.skipIf(
  skipWithout('the Linux sandbox (bubblewrap, seccomp, cgroups)', fixture.unavailable),
)('BwrapSandbox.confinedCommand', () => {
  const f: SandboxFixture = fixture;
  afterAll(() => f.close());

  const confined = async (script: string, limits = LIMITS) =>
    f.sandbox.confinedCommand({
      id: `c${process.pid}-${++counter}`,
      argv: ['/bin/sh', '-c', script],
      env: { PATH: '/usr/bin:/bin' },
      workspace: await f.workspace(),
      readOnlyMounts: [],
      limits,
      egressSocket: null,
    });

  it('runs the process in bubblewrap inside a cgroup of its own with the limits; release removes it', async () => {
    const limits = { ...LIMITS, memoryBytes: 96 * 2 ** 20, pids: 12, cpus: 0.5 };
    const c = await confined('id -u; ls /', limits);
    const id = `c${process.pid}-${counter}`;
    expect(readFileSync(`${dir('memory', id)}/memory.limit_in_bytes`, 'utf8').trim()).toBe(
      String(96 * 2 ** 20),
    );
    expect(readFileSync(`${dir('pids', id)}/pids.max`, 'utf8').trim()).toBe('12');
    expect(readFileSync(`${dir('cpu', id)}/cpu.cfs_quota_us`, 'utf8').trim()).toBe('50000');
    const out = await spawnConfined(c);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^65534$/m);
    expect(out.stdout).toContain('workspace');
    await c.release();
    expect(existsSync(dir('memory', id))).toBe(false);
    expect(existsSync(dir('pids', id))).toBe(false);
    await c.release(); // safe to repeat
  });

  it('keeps environment values off every command line: bubblewrap reads its options from a pipe', async () => {
    const c = await f.sandbox.confinedCommand({
      id: `c${process.pid}-${++counter}`,
      argv: ['/bin/sh', '-c', 'echo "seen $SECRET_CANARY"; sleep 0.3'],
      env: { PATH: '/usr/bin:/bin', SECRET_CANARY: 'canary-7f3a' },
      workspace: await f.workspace(),
      readOnlyMounts: [],
      limits: LIMITS,
      egressSocket: null,
    });
    expect(c.args.join(' ')).not.toContain('canary-7f3a');
    const running = spawnConfined(c);
    let ended = false;
    const end = () => (ended = true);
    running.then(end, end);
    let cmdlines = '';
    // Sampled until the program is seen or has ended, however slowly bubblewrap starts.
    while (!ended && !cmdlines.includes('SECRET_CANARY')) {
      await new Promise((r) => setTimeout(r, 20));
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        try {
          cmdlines += readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          // gone
        }
      }
    }
    const out = await running;
    expect(out.stdout).toBe('seen canary-7f3a\n');
    expect(cmdlines).toContain('SECRET_CANARY'); // the program's own argv names it…
    expect(cmdlines).not.toContain('canary-7f3a'); // …but no command line holds the value
    await c.release();
  });

  it('holds every process it forks to the pids limit', async () => {
    const c = await confined(
      'i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i+1)); done; echo forked all',
      { ...LIMITS, pids: 10 },
    );
    const out = await spawnConfined(c);
    expect(out.stdout).not.toContain('forked all');
    expect(out.stderr).toMatch(/fork/i);
    expect(c.usage().limitHit).toBe('pids');
    await c.release();
  });

  it('is killed by the kernel at the memory limit', async () => {
    // tail holds a whole line in memory; /dev/zero has no newline.
    const c = await confined('head -c 400000000 /dev/zero | tail -n 1 >/dev/null', {
      ...LIMITS,
      memoryBytes: 48 * 2 ** 20,
    });
    const out = await spawnConfined(c);
    expect(out.code).not.toBe(0);
    expect(c.usage().limitHit).toBe('memory');
    await c.release();
  });

  it('leaves a live confined process alone when orphans are reaped', async () => {
    const c = await confined('sleep 30');
    const id = `c${process.pid}-${counter}`;
    const running = spawnConfined(c);
    for (let i = 0; i < 100; i++) {
      if (readFileSync(`${dir('pids', id)}/cgroup.procs`, 'utf8').trim() !== '') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await f.sandbox.reapOrphans()).not.toContain(id);
    expect(readFileSync(`${dir('pids', id)}/cgroup.procs`, 'utf8').trim()).not.toBe('');
    await c.release();
    await running;
  });

  it('refuses a second process of the same id while the first is held', async () => {
    const c = await confined('true');
    const id = `c${process.pid}-${counter}`;
    const again = await f.sandbox
      .confinedCommand({
        id,
        argv: ['true'],
        env: {},
        workspace: await f.workspace(),
        readOnlyMounts: [],
        limits: LIMITS,
        egressSocket: null,
      })
      .catch((e: unknown) => e);
    expect(isGatehouseError(again) && again.code).toBe('INVALID_INPUT');
    await c.release();
  });
});
