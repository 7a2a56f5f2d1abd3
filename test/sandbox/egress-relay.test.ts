import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressRelay } from '../../src/sandbox/index.js';
import { parseRequestLine } from '../../src/sandbox/egress-relay.js';

let dir: string;
let relay: EgressRelay;
/** A stand-in for a call's egress endpoint: answers each connection with what it was sent. */
let endpoint: Server;
let endpointPath: string;

/** Sends `request` through the relay and resolves what came back once the connection ends. */
function through(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection(relay.path);
    let got = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => {
      got += d;
      if (got.startsWith('echo:')) c.end();
    });
    c.on('close', () => resolve(got));
    c.on('error', reject);
    c.write(request);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-relay-'));
  endpointPath = join(dir, 'endpoint.sock');
  endpoint = createServer((s) => s.once('data', (d) => s.end(`echo:${String(d)}`)));
  await new Promise<void>((ok) => endpoint.listen(endpointPath, ok));
  relay = await EgressRelay.open(dir, null);
});

afterAll(async () => {
  await relay?.close();
  endpoint?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the egress relay of a sandbox kept between calls', () => {
  it("passes connections to the running call's endpoint, and answers 403 between calls, noting each once", async () => {
    relay.use(endpointPath);
    expect(await through('GET http://a.test/ HTTP/1.1\r\n\r\n')).toBe(
      'echo:GET http://a.test/ HTTP/1.1\r\n\r\n',
    );
    expect(relay.takeRefused()).toEqual([]);

    relay.use(null);
    const answer = await through('CONNECT Late.Example.:8443 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).toMatch(
      /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*no call of this attempt is running/,
    );
    expect(relay.takeRefused()).toEqual([
      {
        at: expect.any(String) as unknown,
        method: 'CONNECT',
        host: 'late.example',
        port: 8443,
        allowed: false,
        betweenCalls: true,
        reason: expect.stringMatching(/^between calls: /) as unknown,
      },
    ]);
    expect(relay.takeRefused()).toEqual([]);
  });

  it('itemises at most 100 refusals between two calls and counts the rest in one more entry', async () => {
    relay.use(null);
    for (let i = 0; i < 104; i += 4)
      await Promise.all(
        [0, 1, 2, 3].map((k) => through(`GET http://h${i + k}.test:81/ HTTP/1.1\r\n\r\n`)),
      );
    const taken = relay.takeRefused();
    expect(taken).toHaveLength(101);
    expect(taken.slice(0, 100).every((d) => d.port === 81 && d.method === 'GET')).toBe(true);
    expect(taken[100]).toMatchObject({
      host: '',
      port: 0,
      reason: 'between calls: 4 more connections were refused and not itemised (at most 100 are)',
    });
  });

  it('reads the target of a proxy request line, and nothing of anything else', () => {
    expect(parseRequestLine('CONNECT [::1]:443 HTTP/1.1\r')).toEqual({
      method: 'CONNECT',
      host: '::1',
      port: 443,
    });
    expect(parseRequestLine('POST https://API.test/x?y HTTP/1.0')).toEqual({
      method: 'POST',
      host: 'api.test',
      port: 443,
    });
    expect(parseRequestLine('GET http://[fd00::1]:8080/ HTTP/1.1')).toEqual({
      method: 'GET',
      host: 'fd00::1',
      port: 8080,
    });
    const none = { method: '', host: '', port: 0 };
    expect(parseRequestLine(null)).toEqual(none);
    expect(parseRequestLine('\u0016\u0003\u0001 hello')).toEqual(none);
    expect(parseRequestLine('GET /relative HTTP/1.1')).toEqual({ ...none, method: 'GET' });
    expect(parseRequestLine('CONNECT host:99999 HTTP/1.1')).toEqual({ ...none, method: 'CONNECT' });
    expect(parseRequestLine('GET ftp://h.test/ HTTP/1.1')).toEqual({ ...none, method: 'GET' });
  });
});
