import { readFileSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BwrapSandbox } from '../../src/sandbox/index.js';
import type {
  BwrapSandboxOptions,
  SandboxLimits,
  SandboxResult,
  SandboxSpec,
} from '../../src/sandbox/index.js';

/** The host user sandboxes run as in these tests (the default). */
export const SANDBOX_USER = { uid: 65534, gid: 65534 };

export const LIMITS: SandboxLimits = {
  memoryBytes: 256 * 2 ** 20,
  cpus: 1,
  pids: 64,
  timeoutMs: 20_000,
};

/** A sandbox of its own per test file: its own cgroup parent, so files reap only their own. */
export interface SandboxFixture {
  sandbox: BwrapSandbox;
  /** Null when this machine runs sandboxes; else why the file's tests are skipped. */
  unavailable: string | null;
  cgroupParent: string;
  stateDir: string;
  /** Removes what the fixture made (workspaces, cgroup parents, state). */
  close(): Promise<void>;
  /** A fresh workspace directory owned by the sandbox user. */
  workspace(): Promise<string>;
  /** A temporary directory the sandbox user cannot enter, for canaries. */
  privateDir(): Promise<string>;
}

let counter = 0;

export async function startSandbox(
  name: string,
  options: Partial<BwrapSandboxOptions> = {},
): Promise<SandboxFixture> {
  const stateDir = await mkdtemp(join(tmpdir(), `gatehouse-${name}-state-`));
  const cgroupParent = `gatehouse/test-${name}-${process.pid}`;
  const sandbox = await BwrapSandbox.start({ stateDir, cgroupParent, ...options });
  const unavailable = await sandbox.check();
  const dirs: string[] = [stateDir];
  const mkdir = async (prefix: string): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), `gatehouse-${name}-${prefix}-`));
    dirs.push(dir);
    return dir;
  };
  return {
    sandbox,
    unavailable,
    cgroupParent,
    stateDir,
    async close() {
      await sandbox.reapOrphans().catch(() => []);
      await sandbox.close();
      for (const controller of ['memory', 'cpu', 'pids', 'freezer', 'cpuacct']) {
        await rmdir(`/sys/fs/cgroup/${controller}/${cgroupParent}`).catch(() => undefined);
      }
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
    async workspace() {
      const dir = await mkdir('ws');
      await chown(dir, SANDBOX_USER.uid, SANDBOX_USER.gid);
      return dir;
    },
    privateDir: () => mkdir('private'),
  };
}

/** What a run printed, and how it ended. */
export interface Ran {
  result: SandboxResult;
  stdout: string;
  stderr: string;
}

/** Runs `argv` in a fresh workspace (or `spec.workspace`) and collects the output. */
export async function run(
  fixture: SandboxFixture,
  argv: string[],
  spec: Partial<SandboxSpec> = {},
): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const result = await fixture.sandbox.run({
    id: `t${process.pid}-${++counter}`,
    argv,
    env: { PATH: '/usr/bin:/bin' },
    workspace: spec.workspace ?? (await fixture.workspace()),
    readOnlyMounts: [],
    limits: LIMITS,
    egressSocket: null,
    onStdout: (c) => (stdout += c.toString()),
    onStderr: (c) => (stderr += c.toString()),
    signal: new AbortController().signal,
    ...spec,
  });
  return { result, stdout, stderr };
}

/** Runs a shell script in the sandbox. */
export function sh(fixture: SandboxFixture, script: string, spec: Partial<SandboxSpec> = {}) {
  return run(fixture, ['/bin/sh', '-c', script], spec);
}

/** Host processes (pids) whose command line contains `text`, like `pgrep -f`; not this one. */
export function hostProcesses(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(text)) found.push(pid);
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}
