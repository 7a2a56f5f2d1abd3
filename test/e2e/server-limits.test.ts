import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import { ensureBuilt, spawnServer } from '../helpers/cli.js';
import type { ServerProcess } from '../helpers/cli.js';

/** Short limits, so a stalled client is cut within seconds (the defaults are 10 s and 30 s). */
const LIMITS = {
  GATEHOUSE_HEADERS_TIMEOUT_MS: '1000',
  GATEHOUSE_REQUEST_TIMEOUT_MS: '2000',
  GATEHOUSE_KEEP_ALIVE_TIMEOUT_MS: '1000',
  GATEHOUSE_MAX_CONNECTIONS: '20',
  GATEHOUSE_STREAM_HEARTBEAT_MS: '300',
  GATEHOUSE_STREAM_STALL_MS: '1500',
  // Far above what the stall test leaves unread, so that reader is closed as stalled, not behind.
  GATEHOUSE_STREAM_BUFFER_BYTES: String(64 * 1024 * 1024),
  GATEHOUSE_SEND_TIMEOUT_MS: '1000',
};

let s: ServerProcess;
let tokens: DemoTokens;
let port: number;
let dir: string;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-limits-'));
  s = await spawnServer(dir, 60_000, LIMITS);
  tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
  port = Number(new URL(s.url).port);
}, 90_000);

afterAll(async () => {
  await s?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** A raw connection and everything the server sent on it, until it closed. */
interface Raw {
  socket: Socket;
  received(): string;
  /** Resolves when the server (or anyone) closed it; rejects after `ms`. */
  closed(ms: number): Promise<string>;
}

function open(port: number): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let ended = false;
    const waiters: (() => void)[] = [];
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      ended = true;
      for (const w of waiters.splice(0)) w();
    });
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => text,
        closed: (ms) =>
          new Promise((res, rej) => {
            if (ended) return res(text);
            const timer = setTimeout(
              () => rej(new Error(`still open after ${ms} ms; got ${JSON.stringify(text)}`)),
              ms,
            );
            waiters.push(() => {
              clearTimeout(timer);
              res(text);
            });
          }),
      }),
    );
    socket.once('error', reject);
  });
}

const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const statusLine = (text: string) => text.split('\r\n')[0];

describe('request limits of a real gateway', () => {
  it('answers 408 and closes a connection whose headers trickle in (slow loris)', async () => {
    const c = await open(port);
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // One header line every 200 ms: never the blank line that ends them.
    const drip = setInterval(() => c.socket.writable && c.socket.write('X-Drip: 1\r\n'), 200);
    try {
      expect(statusLine(await c.closed(15_000))).toBe('HTTP/1.1 408 Request Timeout');
    } finally {
      clearInterval(drip);
    }
  });

  it('answers 408 and closes an unauthenticated connection whose body stalls', async () => {
    const c = await open(port);
    c.socket.write(
      'POST /v1/invocations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"tool":',
    );
    expect(statusLine(await c.closed(15_000))).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('closes an idle keep-alive connection, and one that never sends a byte', async () => {
    const idle = await open(port);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const silent = await open(port);
    expect(statusLine(await idle.closed(15_000))).toBe('HTTP/1.1 200 OK');
    expect(statusLine(await silent.closed(15_000))).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('holds at most the configured connections: more are closed as they arrive', async () => {
    const before = openFds(s.pid);
    const held = await Promise.all(Array.from({ length: 20 }, () => open(port)));
    for (const h of held) h.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const extra = await Promise.all(Array.from({ length: 30 }, () => open(port)));
    // Each one over the limit is closed at once, unanswered.
    for (const e of extra) expect(await e.closed(5_000)).toBe('');
    expect(openFds(s.pid) - before).toBeLessThanOrEqual(20);
    // The held ones time out (408), and the gateway serves again.
    for (const h of held)
      expect(statusLine(await h.closed(15_000))).toBe('HTTP/1.1 408 Request Timeout');
    const res = await fetch(`${s.url}/healthz`);
    expect(res.status).toBe(200);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(Number(/^gatehouse_connections_dropped_total (\d+)/m.exec(metrics)?.[1])).toBe(30);
  });

  it('cuts an answer its client stopped reading, instead of holding it', async () => {
    // About 7 MB of descriptors, far more than the kernel's socket buffers hold.
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${s.url}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          id: `big-${i}`,
          type: 'AssetReleasePublished',
          data: {
            assetId: 'big/tool',
            version: `1.0.${i}`,
            inFlightPolicy: 'finish',
            descriptor: {
              id: 'big/tool',
              version: `1.0.${i}`,
              kind: 'native',
              description: 'd'.repeat(700_000),
              inputSchema: { type: 'object' },
              sideEffect: { class: 'read' },
              execution: { handler: 'demo.echo' },
            },
          },
        }),
      });
      expect(res.status).toBe(200);
    }
    const c = await open(port);
    c.socket.pause();
    c.socket.write(
      `GET /v1/tools HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.admin}\r\n\r\n`,
    );
    // Not reading for three times the send timeout; then what arrives ends short of the answer.
    await new Promise((r) => setTimeout(r, 3_000));
    c.socket.resume();
    const text = await c.closed(10_000);
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1]);
    expect(length).toBeGreaterThan(7_000_000);
    expect(Buffer.byteLength(text)).toBeLessThan(length);
    // A client that reads gets the whole answer.
    const whole = await fetch(`${s.url}/v1/tools`, {
      headers: { authorization: `Bearer ${tokens.admin}` },
    });
    expect((await whole.text()).length).toBeGreaterThan(7_000_000);
  });

  it('keeps an event stream open well past the request timeout', async () => {
    const c = await open(port);
    c.socket.write(
      `GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.operator}\r\n\r\n`,
    );
    // Three times the request timeout (2 s) and the headers timeout (1 s).
    await new Promise((r) => setTimeout(r, 6_000));
    expect(statusLine(c.received())).toBe('HTTP/1.1 200 OK');
    expect(c.socket.destroyed).toBe(false);
    // Heartbeats kept coming all along.
    expect(c.received().split(': keepalive').length - 1).toBeGreaterThanOrEqual(10);
    c.socket.destroy();
  });

  it('closes an event stream whose reader takes nothing, though it is within its buffer', async () => {
    const c = await open(port);
    c.socket.write(
      `GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.operator}\r\n\r\n`,
    );
    await until(() => c.received().includes(': stream of tenant'), 10_000);
    c.socket.pause();
    // About 19 MB of events: more than the kernel's socket buffers hold, less than the 64 MiB
    // the reader may leave unread. Heartbeats keep being queued for it meanwhile.
    const reason = 'r'.repeat(200_000);
    for (let round = 0; round < 24; round++) {
      const events = [0, 1, 2, 3].flatMap((k) => {
        const version = `3.0.${round * 4 + k}`;
        return [
          {
            id: `stall-pub-${version}`,
            type: 'AssetReleasePublished',
            data: {
              assetId: 'stall/tool',
              version,
              inFlightPolicy: 'finish',
              descriptor: {
                id: 'stall/tool',
                version,
                kind: 'native',
                description: 'd',
                inputSchema: { type: 'object' },
                sideEffect: { class: 'read' },
                execution: { handler: 'demo.echo' },
              },
            },
          },
          {
            id: `stall-rev-${version}`,
            type: 'AssetReleaseRevoked',
            data: { assetId: 'stall/tool', version, reason },
          },
        ];
      });
      const res = await fetch(`${s.url}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(res.status, await res.text()).toBe(200);
    }
    const dropped = async (reason: string) => {
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      const line = new RegExp(
        `^gatehouse_event_stream_dropped_total\\{reason="${reason}"\\} (\\d+)`,
        'm',
      );
      return Number(line.exec(metrics)?.[1] ?? 0);
    };
    await until(async () => (await dropped('stalled')) === 1, 15_000);
    expect(await dropped('behind')).toBe(0);
    // The gateway closed it: reading what the kernel holds reaches the end.
    c.socket.resume();
    await c.closed(15_000);
  }, 90_000);

  it('keeps serving while nobody reads its log (a stalled collector): lines wait, calls do not', async () => {
    const stderr = s.child.stderr!;
    stderr.removeAllListeners('data');
    stderr.pause();
    try {
      // Each call logs a line: far more than a pipe holds (64 KiB) unread.
      const echo = async (i: number) => {
        const res = await fetch(`${s.url}/v1/invocations`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tokens.agent}`,
            'content-type': 'application/json',
            'idempotency-key': `stalled-log-${i}`,
          },
          body: JSON.stringify({
            tool: { id: 'demo/echo', version: '1.0.0' },
            input: { message: 'x'.repeat(200) },
            environment: 'dev',
          }),
          signal: AbortSignal.timeout(10_000),
        });
        return res.status;
      };
      for (let batch = 0; batch < 60; batch++) {
        const statuses = await Promise.all(
          Array.from({ length: 10 }, (_, j) => echo(batch * 10 + j)),
        );
        expect(statuses).toEqual(Array(10).fill(200));
      }
      const health = await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      expect(health.status).toBe(200);
    } finally {
      stderr.resume();
    }
  }, 120_000);
});

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
