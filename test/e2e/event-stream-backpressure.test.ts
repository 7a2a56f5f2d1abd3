import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import { ensureBuilt, spawnServer } from '../helpers/cli.js';
import type { ServerProcess } from '../helpers/cli.js';
import { storedRowsOf } from '../helpers/stored-rows.js';

/**
 * Readers of `/v1/events/stream` that stop reading, against a real gateway process: what the
 * gateway holds for them stays bounded, they are closed, and a reader that comes back with
 * Last-Event-ID gets every event in order.
 */
const BUFFER = 64 * 1024;
let s: ServerProcess;
let tokens: DemoTokens;
let port: number;
let dir: string;
let version = 0;

beforeAll(async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-backpressure-'));
  s = await spawnServer(dir, 60_000, {
    GATEHOUSE_STREAM_BUFFER_BYTES: String(BUFFER),
    GATEHOUSE_STREAM_MAX_PER_PRINCIPAL: '100',
  });
  tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;
  port = Number(new URL(s.url).port);
}, 90_000);

afterAll(async () => {
  await s?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

/** The gateway's resident memory, in MiB. */
function rssMiB(): number {
  const status = readFileSync(`/proc/${s.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

/**
 * Publishes `rounds` × 4 tool versions and revokes each with a reason of `reasonBytes`: eight
 * events per round, four of them large. Returns how many events were written.
 */
async function flood(rounds: number, reasonBytes: number): Promise<number> {
  const reason = 'r'.repeat(reasonBytes);
  for (let round = 0; round < rounds; round++) {
    const events: unknown[] = [];
    for (let k = 0; k < 4; k++) {
      const v = `2.0.${version++}`;
      events.push(
        {
          id: `pub-${v}`,
          type: 'AssetReleasePublished',
          data: {
            assetId: 'flood/tool',
            version: v,
            inFlightPolicy: 'finish',
            descriptor: {
              id: 'flood/tool',
              version: v,
              kind: 'native',
              description: 'floods the event stream',
              inputSchema: { type: 'object' },
              sideEffect: { class: 'read' },
              execution: { handler: 'demo.echo' },
            },
          },
        },
        {
          id: `rev-${v}`,
          type: 'AssetReleaseRevoked',
          data: { assetId: 'flood/tool', version: v, reason },
        },
      );
    }
    const res = await fetch(`${s.url}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify(events),
    });
    expect(res.status, await res.text()).toBe(200);
  }
  return rounds * 8;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name));
  return Number(line?.split(' ').at(-1) ?? NaN);
}

/** A raw stream request whose socket is read up to the stream's first line, then never again. */
function stalledReader(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens.operator}\r\n\r\n`,
      );
    });
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString();
      if (!text.includes(': stream of tenant')) return;
      socket.off('data', onData);
      socket.pause();
      resolve(socket);
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

/** Resumes a stalled socket and resolves once the gateway has closed it (it reads to the end). */
function closedByGateway(socket: Socket, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway kept it open ${ms} ms`)), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.on('error', () => undefined);
    socket.resume();
  });
}

/** A stream reader whose reading can be stopped and resumed, collecting complete frames' ids. */
class Reader {
  readonly ids: number[] = [];
  private res: IncomingMessage | undefined;
  private buffer = '';
  ended = false;

  static open(lastEventId: number | undefined): Promise<Reader> {
    const reader = new Reader();
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { authorization: `Bearer ${tokens.operator}` };
      if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
      const req = request(
        { host: '127.0.0.1', port, path: '/v1/events/stream', headers },
        (res) => {
          expect(res.statusCode).toBe(200);
          reader.res = res;
          res.setEncoding('utf8');
          res.on('data', (d: string) => reader.take(d));
          res.on('close', () => (reader.ended = true));
          res.on('error', () => (reader.ended = true));
          resolve(reader);
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  private take(d: string): void {
    this.buffer += d;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const id = /^id: (\d+)$/m.exec(block)?.[1];
      if (id !== undefined) this.ids.push(Number(id));
    }
  }

  pause(): void {
    this.res?.pause();
  }

  resume(): void {
    this.res?.resume();
  }

  close(): void {
    this.res?.destroy();
  }
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('event stream backpressure', () => {
  it('keeps memory bounded with stalled readers while events flow, and closes them', async () => {
    const readers = await Promise.all(Array.from({ length: 20 }, () => stalledReader()));
    const before = rssMiB();
    // 20 rounds × 4 reasons of 200 kB: about 16 MB of events, which each stalled reader would
    // have been sent (20 × 16 MB held) had the gateway not cut it off.
    await flood(20, 200_000);
    const grown = rssMiB() - before;
    expect(grown).toBeLessThan(120);
    expect(await metric('gatehouse_event_stream_clients')).toBe(0);
    expect(
      await metric('gatehouse_event_stream_dropped_total{reason="behind"}'),
    ).toBeGreaterThanOrEqual(20);
    await Promise.all(readers.map((r) => closedByGateway(r, 10_000)));
    // And the gateway still serves.
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  }, 120_000);

  it('gives a reader that stalls and comes back with Last-Event-ID every event, in order', async () => {
    const start = (await outboxIds(0)).at(-1) ?? 0;
    let reader = await Reader.open(start);
    const seen: number[] = [];
    let drops = 0;
    for (let cycle = 0; cycle < 3; cycle++) {
      reader.pause();
      await flood(10, 200_000);
      const written = (await outboxIds(start)).length;
      reader.resume();
      await until(
        () => reader.ended || seen.length + reader.ids.length >= written,
        20_000,
        'the reader',
      );
      if (reader.ended) {
        drops += 1;
        seen.push(...reader.ids);
        reader = await Reader.open(seen.at(-1) ?? start);
      }
    }
    const all = await outboxIds(start);
    await until(() => seen.length + reader.ids.length >= all.length, 20_000, 'every event');
    seen.push(...reader.ids);
    reader.close();
    // Each stall outran the 64 KiB bound, so the gateway dropped the reader, and it resumed.
    expect(drops).toBeGreaterThanOrEqual(1);
    expect(all.length).toBeGreaterThanOrEqual(3 * 4 * 8);
    expect(seen).toEqual(all);
  }, 120_000);
});

/** The ids of the demo tenant's events after `after`, read from the gateway's own database. */
async function outboxIds(after: number): Promise<number[]> {
  const rows = await storedRowsOf<{ seq: number }>(
    dir,
    "SELECT seq FROM outbox WHERE tenant = 'acme' AND seq > ? ORDER BY seq",
    after,
  );
  return rows.map((r) => Number(r.seq));
}
