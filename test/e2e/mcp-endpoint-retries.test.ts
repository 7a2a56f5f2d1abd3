import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, NativeRegistry } from '../helpers/gateway-fixture.js';
import { connectMcp, rpcAnswer } from '../helpers/mcp-client.js';
import { publishAgent } from '../helpers/sandbox-tools.js';

/** Executions of `test.tick`: each answers the next number, so a stale answer shows. */
let ticks = 0;

const tickTool = {
  id: 'test/tick',
  version: '1.0.0',
  kind: 'native',
  description: 'Answers how many times it has run, this call included.',
  inputSchema: { type: 'object', additionalProperties: false, properties: {} },
  sideEffect: { class: 'read' },
  execution: { handler: 'test.tick' },
};
const NAME = 'test_tick__1_0_0';

let g: DemoGateway;
let url: string;
let token: string;
const clients: Client[] = [];

beforeAll(async () => {
  g = await startDemoGateway({
    listen: true,
    nativeHandlers: (native: NativeRegistry) =>
      native.register('test.tick', () => Promise.resolve({ tick: ++ticks })),
  });
  url = `${g.url!}/mcp`;
  token = await publishAgent(g, 'tick-agent', [tickTool]);
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await g?.close();
});

async function session(): Promise<{ client: Client; sessionId: string }> {
  const { client, transport } = await connectMcp(url, token);
  clients.push(client);
  return { client, sessionId: transport.sessionId! };
}

const tickOf = (r: CallToolResult) => (r.structuredContent as { tick: number }).tick;
const metaOf = (r: CallToolResult) => r._meta ?? {};

/** A `tools/call` of test/tick as raw JSON-RPC in `sessionId`, with the JSON-RPC id given. */
async function rawCall(sessionId: string, id: number | string): Promise<CallToolResult> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: NAME, arguments: {} },
    }),
  });
  const body = (await rpcAnswer(res)) as {
    id: unknown;
    result?: CallToolResult;
    error?: unknown;
  };
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(body.id).toEqual(id);
  expect(body.error, JSON.stringify(body)).toBeUndefined();
  return body.result!;
}

describe('tools/call without _meta "gatehouse/idempotencyKey"', () => {
  it('runs each call of the SDK client anew: a second identical call gets a fresh answer', async () => {
    const { client } = await session();
    const first = await client.callTool({ name: NAME, arguments: {} });
    const second = await client.callTool({ name: NAME, arguments: {} });
    expect(first.isError).toBeFalsy();
    expect(second.isError).toBeFalsy();
    expect(tickOf(second)).toBe(tickOf(first) + 1);
    expect(metaOf(second)['gatehouse/invocationId']).not.toBe(
      metaOf(first)['gatehouse/invocationId'],
    );
    expect(metaOf(first)['gatehouse/idempotencyKeyDerived']).toBe(true);
    expect(metaOf(second)['gatehouse/idempotencyKey']).not.toBe(
      metaOf(first)['gatehouse/idempotencyKey'],
    );
    // Both identical calls carry the same request hash: only the JSON-RPC request differs.
    expect(metaOf(second)['gatehouse/requestHash']).toBe(metaOf(first)['gatehouse/requestHash']);
  });

  it('answers a retry of the same JSON-RPC request (session and id) from its record, executed once', async () => {
    const { sessionId } = await session();
    const first = await rawCall(sessionId, 41);
    const executed = g.executions('test.tick');
    const retry = await rawCall(sessionId, 41);
    expect(tickOf(retry)).toBe(tickOf(first));
    expect(metaOf(retry)['gatehouse/invocationId']).toBe(metaOf(first)['gatehouse/invocationId']);
    expect(g.executions('test.tick')).toBe(executed);

    // Another id in the same session, or the same id in another session, is another request.
    const next = await rawCall(sessionId, 42);
    expect(tickOf(next)).toBe(tickOf(first) + 1);
    const other = await session();
    const elsewhere = await rawCall(other.sessionId, 41);
    expect(tickOf(elsewhere)).toBe(tickOf(next) + 1);
    expect(g.executions('test.tick')).toBe(executed + 2);
  });

  it('a caller-given key still answers every call with it from the one record', async () => {
    const { client } = await session();
    const _meta = { 'gatehouse/idempotencyKey': 'tick-own-1' };
    const first = await client.callTool({ name: NAME, arguments: {}, _meta });
    const again = await client.callTool({ name: NAME, arguments: {}, _meta });
    expect(tickOf(again)).toBe(tickOf(first));
    expect(metaOf(again)['gatehouse/invocationId']).toBe(metaOf(first)['gatehouse/invocationId']);
    expect(metaOf(again)['gatehouse/idempotencyKeyDerived']).toBeUndefined();
  });
});
