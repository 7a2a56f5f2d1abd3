import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll } from 'vitest';
import { loadSandboxConfig } from '../../src/app/sandbox-config.js';
import { databaseFor, existingDatabaseFor } from './test-backend.js';
import { unmountUnder } from './tmpfs.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The built command line. */
export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * Makes sure `dist/` holds the CLI built from the current sources: it compiles when
 * `dist/cli/main.js` is missing or older than any file under `src/` (an mtime check, so a stale
 * build never runs silently). The test command builds first, so this only compiles when a test
 * file is run on its own after a change.
 */
export function ensureBuilt(): void {
  if (existsSync(CLI) && newestSource() <= statSync(CLI).mtimeMs) return;
  const built = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (!existsSync(CLI) || newestSource() > statSync(CLI).mtimeMs)
    throw new Error(`building did not refresh ${CLI} (tsc exited ${String(built.status)})`);
}

/** The latest modification time (ms) of any file under `dir` (default `src/`). */
function newestSource(dir = join(ROOT, 'src')): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.isFile()) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** What a finished CLI run printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node dist/cli/main.js ...args` to its end. On a run switched to PostgreSQL
 * (test/helpers/test-backend.ts), `--data DIR` without `--db` also points the command at the
 * database a gateway of DIR used.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const data = args.indexOf('--data');
  const dir = data >= 0 ? args[data + 1] : undefined;
  const db =
    dir !== undefined && !args.includes('--db') && env.GATEHOUSE_DB === undefined
      ? existingDatabaseFor(dir)
      : undefined;
  return runNode(CLI, args, db !== undefined ? { ...env, GATEHOUSE_DB: db } : env);
}

/**
 * Runs `node SCRIPT ...args` from the repository root to its end, with `env` beside the parent's
 * environment without its GATEHOUSE_* settings.
 */
export function runNode(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env: { ...cleanEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A `gatehouse serve` child process. */
export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  /** Everything it wrote so far. */
  output(): string;
  /** Sends `signal` (default SIGKILL) and waits for the process to exit. Safe to call twice. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `gatehouse serve --demo --data DIR --port 0` (with `env` beside the parent's environment
 * without its GATEHOUSE_* settings) and waits for its "listening on URL" line. On a run switched
 * to PostgreSQL, DIR's database is that run's (test/helpers/test-backend.ts) unless `env` names one.
 * A start on a loaded machine (the suite runs files side by side) can take 15–20 s, so the default
 * wait leaves room; a hung start still fails.
 */
export async function spawnServer(
  dataDir: string,
  timeoutMs = 45_000,
  env: NodeJS.ProcessEnv = {},
): Promise<ServerProcess> {
  const db = env.GATEHOUSE_DB === undefined ? await databaseFor(dataDir) : undefined;
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--demo', '--data', dataDir, '--port', '0'],
    {
      cwd: ROOT,
      env: { ...cleanEnv(), ...env, ...(db !== undefined ? { GATEHOUSE_DB: db } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void kill().then(() => reject(new Error(`server did not start in time:\n${out}`)));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Gatehouse listening on (https?:\/\/\S+)/.exec(out);
      if (m?.[1] && child.pid !== undefined) {
        clearTimeout(timer);
        resolve({ child, pid: child.pid, url: m[1], output: () => out, kill });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${out}`));
    });
  });
}

/** The parent's environment without GATEHOUSE_* settings, so the child sees only what we pass. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('GATEHOUSE_')),
  );
}

/** One request to a gateway over its socket, as a client would send it; the JSON answer. */
export async function api<T = unknown>(
  base: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  key?: string,
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (key) headers['idempotency-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** The first invocation the gateway lists as `running`, polling every `everyMs` up to `tries` times. */
export async function firstRunning<T>(
  base: string,
  operatorToken: string,
  tries: number,
  everyMs: number,
): Promise<T | undefined> {
  for (let i = 0; i < tries; i++) {
    const list = await api<{ invocations: T[] }>(
      base,
      'GET',
      '/v1/invocations?status=running',
      operatorToken,
    );
    if (list.body.invocations[0]) return list.body.invocations[0];
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return undefined;
}

/** Where a gateway on `dataDir` started with `env` keeps workspaces and egress sockets. */
function sandboxDirOf(dataDir: string, env: NodeJS.ProcessEnv = {}): string {
  return loadSandboxConfig({ ...process.env, ...env }, dataDir).root;
}

/**
 * Gateways a test file spawns, and the scratch directories they use: after each test every server
 * still up gets SIGTERM (so it closes its sandboxes and a failed test leaves no orphans) and the
 * directories are removed. Call at a file's top level; builds the CLI first if needed.
 */
export function useServers(): {
  start: (...args: Parameters<typeof spawnServer>) => Promise<ServerProcess>;
  tempDir: (prefix: string) => string;
  removeAfter: (path: string) => void;
} {
  const servers: ServerProcess[] = [];
  const dirs: string[] = [];
  beforeAll(() => {
    ensureBuilt();
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.kill('SIGTERM');
    // A gateway killed by a test leaves its tmpfs mounts (workspaces, egress sockets) behind.
    for (const d of dirs.splice(0)) {
      unmountUnder(d);
      rmSync(d, { recursive: true, force: true });
    }
  });
  return {
    start: async (...args) => {
      // Its sandbox directory lies outside the data directory: removed after the test too.
      dirs.push(sandboxDirOf(args[0], args[2]));
      const s = await spawnServer(...args);
      servers.push(s);
      return s;
    },
    tempDir: (prefix) => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    removeAfter: (path) => {
      dirs.push(path);
    },
  };
}
