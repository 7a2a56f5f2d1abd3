/** Child servers and the autocannon load put on them. */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

/** A server running in a child process; `close()` is safe to call twice. */
export interface ChildServer {
  url: string;
  /** The child's process id. */
  pid: number;
  close(): Promise<void>;
}

/**
 * How {@link spawnServer} knows a server is up: its URL found in what it printed, or a probe path
 * (resolved against a known URL) that answers over HTTP.
 */
export type Readiness = ((output: string) => string | null) | { url: string; probe: string };

/**
 * Spawns `node args…` and waits until it is up (by default: the first `http://…` on a line it
 * printed that says `listening`).
 */
export async function spawnServer(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  ready: Readiness = (output) => /listening\S*\s.*?(http:\/\/[^\s)"]+)/i.exec(output)?.[1] ?? null,
): Promise<ChildServer> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const close = () => stopChild(child);
  let output = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let waiting = true;
      const done = (err: Error | null, url = ''): void => {
        if (!waiting) return;
        waiting = false;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(url);
      };
      const timer = setTimeout(() => done(new Error(`not up within 20 s:\n${output}`)), 20_000);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        const url = typeof ready === 'function' ? ready(output) : null;
        if (url !== null) done(null, url);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => {
        done(new Error(`server exited (${code}) before it was up:\n${output}`));
      });
      if (typeof ready !== 'function') {
        const probe = (): void => {
          if (!waiting) return;
          fetch(new URL(ready.probe, ready.url)).then(
            (res) => {
              void res.body?.cancel();
              done(null, ready.url);
            },
            () => setTimeout(probe, 50),
          );
        };
        probe();
      }
    });
    // Keep draining its output without keeping it.
    child.stdout.removeAllListeners('data').resume();
    child.stderr.removeAllListeners('data').resume();
    return { url, pid: child.pid ?? 0, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

/** What a load run came to; latencies in ms (autocannon's resolution is 1 ms). */
export interface LoadResult {
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  firstError?: string;
}

/** Options of {@link postLoad}. */
export interface LoadOptions {
  url: string;
  path: string;
  body: unknown;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
}

/**
 * POSTs `body` as JSON for `seconds` over `connections` connections, each request with a new
 * Idempotency-Key. Non-2xx answers are counted, and the first one's status and body kept.
 */
export async function postLoad(o: LoadOptions): Promise<LoadResult> {
  const prefix = randomUUID();
  let n = 0;
  let firstError: string | undefined;
  const headers = { 'content-type': 'application/json', ...o.headers };
  const result = await autocannon({
    url: o.url,
    connections: o.connections,
    duration: o.seconds,
    requests: [
      {
        method: 'POST',
        path: o.path,
        body: JSON.stringify(o.body),
        setupRequest: (req) => ({
          ...req,
          headers: { ...headers, 'idempotency-key': `${prefix}-${n++}` },
        }),
        onResponse: (status, body) => {
          if ((status < 200 || status > 299) && firstError === undefined) {
            firstError = `${status} ${body.slice(0, 500)}`;
          }
        },
      },
    ],
  });
  return {
    perSecond: (result['2xx'] + result.non2xx) / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}
