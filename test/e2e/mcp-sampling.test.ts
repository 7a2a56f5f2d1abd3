import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp, openRawSession, rawMcpPost } from '../helpers/mcp-client.js';
import { addAgent } from '../helpers/agents.js';
import type { InvocationRecord } from '../../src/invocation/index.js';

// Sampling and elicitation requests of an upstream, through the real gateway from the real
// server-everything to the official SDK client: forwarded to the session whose call caused them,
// answered, relayed back, and recorded on the invocation.

let g: DemoGateway;
let url: string;
let agent: string;
const clients: Client[] = [];

const TOOLS = {
  sample: { tool: 'trigger-sampling-request', id: 'everything/sample' },
  elicit: { tool: 'trigger-elicitation-request', id: 'everything/elicit' },
  // Listed by server-everything only to a client that declared URL-mode elicitation: the gateway.
  url: { tool: 'trigger-url-elicitation', id: 'everything/url-elicit' },
} as const;
const SAMPLE = 'everything_sample__1_0_0';
const ELICIT = 'everything_elicit__1_0_0';
const URL_ELICIT = 'everything_url-elicit__1_0_0';

beforeAll(async () => {
  // Forwarded requests are bounded lower than by default (GATEHOUSE_MCP_FORWARD_MAX_BYTES).
  g = await startDemoGateway({ listen: true, config: { mcp: { forwarding: { maxBytes: 4096 } } } });
  url = `${g.url!}/mcp`;
  const serverId = (await g.gateway.mcp.list('acme')).find((s) => s.name === 'everything')!.id;
  for (const b of Object.values(TOOLS)) {
    const { descriptor } = await g.gateway.mcp.bind('acme', serverId, 'test', {
      tool: b.tool,
      class: 'read',
      descriptor: { id: b.id, version: '1.0.0' },
    });
    await g.gateway.registry.applyEvents(
      'acme',
      [
        {
          id: `test:${b.id}@1.0.0`,
          type: 'AssetReleasePublished',
          data: { assetId: b.id, version: '1.0.0', descriptor, inFlightPolicy: 'finish' },
        },
      ],
      'test',
    );
  }
  const closure = Object.values(TOOLS).map((b) => ({ id: b.id, version: '1.0.0' }));
  agent = (await addAgent(g, 'asked', closure)).token;
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await g?.close();
});

/** A session whose client declares sampling and elicitation and answers with `answers`. */
async function askedSession(
  answers: {
    sampling: (params: Record<string, unknown>) => Record<string, unknown>;
    elicitation: (params: Record<string, unknown>) => Record<string, unknown>;
  },
  elicitation: { form?: Record<string, never>; url?: Record<string, never> } = { form: {} },
): Promise<{ client: Client; seen: { method: string; params: Record<string, unknown> }[] }> {
  const seen: { method: string; params: Record<string, unknown> }[] = [];
  const { client } = await connectMcp(
    url,
    agent,
    { capabilities: { sampling: {}, elicitation } },
    (c) => {
      c.setRequestHandler('sampling/createMessage', (r) => {
        seen.push({ method: r.method, params: r.params });
        return Promise.resolve(answers.sampling(r.params as Record<string, unknown>) as never);
      });
      c.setRequestHandler('elicitation/create', (r) => {
        seen.push({ method: r.method, params: r.params });
        return Promise.resolve(answers.elicitation(r.params as Record<string, unknown>) as never);
      });
    },
  );
  clients.push(client);
  return { client, seen };
}

/** The JSON-RPC messages of an event stream, as they come. */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('');
      if (data) yield JSON.parse(data);
    }
  }
}

const texts = (r: CallToolResult) =>
  r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** The invocation a tools/call result names, as the REST API shows it. */
async function invocationOf(r: CallToolResult): Promise<InvocationRecord> {
  const id = (r._meta as Record<string, unknown>)['gatehouse/invocationId'] as string;
  const res = await g.inject<InvocationRecord>('GET', `/v1/invocations/${id}`, {
    token: g.tokens.admin,
  });
  expect(res.status).toBe(200);
  return res.body;
}

/** The requests of the tool to its caller, as the execute stage's trace entry records them. */
function interactions(record: InvocationRecord): Record<string, unknown>[] {
  const execute = record.trace.find((t) => t.stage === 'execute');
  return (execute?.details?.interactions ?? []) as Record<string, unknown>[];
}

describe('sampling and elicitation of an upstream', () => {
  it("forwards sampling to the calling session and relays the agent's answer", async () => {
    const { client, seen } = await askedSession({
      sampling: () => ({
        role: 'assistant',
        content: { type: 'text', text: 'forty-two, said the agent' },
        model: 'agent-model',
      }),
      elicitation: () => ({ action: 'decline' }),
    });
    const r = await client.callTool({ name: SAMPLE, arguments: { prompt: 'the answer?' } });
    expect(r.isError, texts(r)).toBeFalsy();
    expect(texts(r)).toContain('forty-two, said the agent');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('sampling/createMessage');
    expect(JSON.stringify(seen[0]!.params.messages)).toContain('the answer?');
    const record = await invocationOf(r);
    const [forwarded, ...more] = interactions(record);
    expect(more).toEqual([]);
    expect(forwarded).toMatchObject({
      method: 'sampling/createMessage',
      outcome: 'answered',
      request: { maxTokens: 100 },
      answer: { model: 'agent-model' },
    });
    expect(record.audit).not.toBeNull();
  });

  it('forwards elicitation and relays the accepted content', async () => {
    const { client, seen } = await askedSession({
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'm' }),
      elicitation: () => ({ action: 'accept', content: { name: 'Ada Lovelace', check: true } }),
    });
    const r = await client.callTool({ name: ELICIT, arguments: {} });
    expect(r.isError, texts(r)).toBeFalsy();
    expect(texts(r)).toContain('Name: Ada Lovelace');
    expect(seen.map((s) => s.method)).toEqual(['elicitation/create']);
    const recorded = interactions(await invocationOf(r));
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      method: 'elicitation/create',
      outcome: 'answered',
      answer: { action: 'accept', content: { name: 'Ada Lovelace', check: true } },
    });
  });

  it('forwards URL-mode elicitation to a client that declared it, and refuses it to one that did not', async () => {
    const args = { url: 'https://example.com/consent', message: 'Open to consent.' };
    const { client, seen } = await askedSession(
      {
        sampling: () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'm' }),
        elicitation: () => ({ action: 'accept' }),
      },
      { form: {}, url: {} },
    );
    const r = await client.callTool({ name: URL_ELICIT, arguments: args });
    expect(r.isError, texts(r)).toBeFalsy();
    expect(texts(r)).toContain('User completed the URL elicitation flow');
    expect(seen).toMatchObject([
      { method: 'elicitation/create', params: { mode: 'url', ...args } },
    ]);
    expect(interactions(await invocationOf(r))).toMatchObject([
      {
        method: 'elicitation/create',
        outcome: 'answered',
        request: { mode: 'url', url: args.url },
        answer: { action: 'accept' },
      },
    ]);

    const formOnly = await askedSession({
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'm' }),
      elicitation: () => ({ action: 'accept' }),
    });
    const refused = await formOnly.client.callTool({ name: URL_ELICIT, arguments: args });
    expect(refused.isError).toBe(true);
    expect(texts(refused)).toMatch(/did not declare url elicitation/);
    expect(formOnly.seen).toEqual([]);
    expect(interactions(await invocationOf(refused))).toMatchObject([
      { method: 'elicitation/create', outcome: 'refused', request: { mode: 'url' } },
    ]);
  });

  it("sends it on the call's own answer stream (no GET stream open) and takes the answer by POST", async () => {
    const post = rawMcpPost(url, agent);
    const session = await openRawSession(post, { sampling: {} });
    const call = await post(
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: SAMPLE, arguments: { prompt: 'raw' } },
      },
      session,
    );
    const messages = sseMessages(call.body!);
    const next = async () => (await messages.next()).value as Record<string, unknown>;
    let m = await next();
    while (m.method !== 'sampling/createMessage') m = await next();
    const answer = await post(
      {
        jsonrpc: '2.0',
        id: m.id,
        result: { role: 'assistant', content: { type: 'text', text: 'raw answer' }, model: 'raw' },
      },
      session,
    );
    expect(answer.status).toBe(202);
    do m = await next();
    while (m.id !== 7);
    expect(JSON.stringify(m.result)).toContain('raw answer');
    await messages.return(undefined);
  });

  it('refuses a request over the configured bound, before the agent sees it', async () => {
    const { client, seen } = await askedSession({
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }),
      elicitation: () => ({ action: 'decline' }),
    });
    const r = await client.callTool({ name: SAMPLE, arguments: { prompt: 'p'.repeat(5000) } });
    expect(r.isError).toBe(true);
    expect(texts(r)).toMatch(/exceeds the 4096-byte bound of requests Gatehouse forwards/);
    expect(seen).toEqual([]);
    const recorded = interactions(await invocationOf(r));
    expect(recorded).toMatchObject([{ method: 'sampling/createMessage', outcome: 'refused' }]);
  });

  it('refuses a session whose client did not declare the capability: the tool errs', async () => {
    const { client } = await connectMcp(url, agent);
    clients.push(client);
    const r = await client.callTool({ name: SAMPLE, arguments: { prompt: 'x' } });
    expect(r.isError).toBe(true);
    expect(texts(r)).toMatch(/did not declare the sampling capability/);
    const recorded = interactions(await invocationOf(r));
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ method: 'sampling/createMessage', outcome: 'refused' });
    expect(recorded[0]!.error).toMatch(/did not declare the sampling capability/);
  });

  it('refuses a call without an MCP session (REST)', async () => {
    const res = await g.invoke(agent, 'rest-elicit-1', {
      tool: { id: TOOLS.elicit.id, version: '1.0.0' },
      input: {},
      environment: 'dev',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(JSON.stringify(res.body.output)).toMatch(/no MCP session to answer elicitation/);
    const recorded = interactions(res.body);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ method: 'elicitation/create', outcome: 'refused' });
  });
});
