import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayEgress } from '../../src/egress/index.js';

/** A loopback server that answers with the number of the connection the request came on. */
let server: Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(String((req.socket as { n?: number }).n)));
  });
  server.on('connection', (socket) => {
    (socket as { n?: number }).n = ++connections;
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((ok) => server.close(() => ok()));
});

/** Sends one request through a fresh egress decision; answers the connection number it used. */
async function through(egress: GatewayEgress, method: string): Promise<number> {
  const url = new URL(`http://127.0.0.1:${port}/x`);
  const opened = await egress.open(url, method);
  expect(opened.decision.allowed, opened.decision.reason).toBe(true);
  try {
    const res = await opened.fetch!.fetch(url, { method });
    return Number(await res.text());
  } finally {
    opened.fetch!.close();
  }
}

describe('GatewayEgress.open keeps connections for safe methods only', () => {
  it('reuses one connection for GETs after identical decisions, and gives each POST its own', async () => {
    const egress = new GatewayEgress({ allow: () => [`127.0.0.1:${port}`] });
    try {
      const gets = [];
      for (let i = 0; i < 5; i++) gets.push(await through(egress, 'GET'));
      expect(new Set(gets).size).toBe(1);
      const posts = [];
      for (let i = 0; i < 3; i++) posts.push(await through(egress, 'POST'));
      expect(new Set(posts).size).toBe(3);
      expect(posts).not.toContain(gets[0]);
    } finally {
      egress.close();
    }
  });

  it('never shares a connection between two gateways, and refuses after close', async () => {
    const a = new GatewayEgress({ allow: () => [`127.0.0.1:${port}`] });
    const b = new GatewayEgress({ allow: () => [`127.0.0.1:${port}`] });
    try {
      expect(await through(a, 'GET')).not.toBe(await through(b, 'GET'));
    } finally {
      a.close();
      b.close();
    }
    await expect(through(a, 'GET')).rejects.toThrow(/closed/);
  });
});
