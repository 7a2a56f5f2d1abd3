import { ProtocolError } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp, text } from '../helpers/mcp-client.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { addAgent } from '../helpers/agents.js';
import { publishAgent, verifiedReceipt } from '../helpers/sandbox-tools.js';

let g: DemoGateway;
let url: string;
let serverId: string;
const clients: Client[] = [];

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  url = `${g.url!}/mcp`;
  const everything = (await g.gateway.mcp.list('acme')).find((s) => s.name === 'everything');
  serverId = everything!.id;
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await g?.close();
});

async function connect(token = g.tokens.agent): Promise<Client> {
  const { client } = await connectMcp(url, token);
  clients.push(client);
  return client;
}

const upstream = () => ({ server: serverId, name: 'everything', untrusted: true });

describe('the demo flow over /mcp against server-everything', () => {
  it('calls everything_echo__1_0_0 through the pipeline: upstream answer, provenance, receipt', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything_echo__1_0_0',
        'everything_get-sum__1_0_0',
        'everything_toggle-simulated-logging__1_0_0',
      ]),
    );
    const r = await client.callTool({
      name: 'everything_echo__1_0_0',
      arguments: { message: 'governed hello' },
    });
    expect(r.isError, text(r)).toBeFalsy();
    // The upstream's own content blocks, not a JSON rendering of them.
    expect(r.content).toEqual([{ type: 'text', text: 'Echo: governed hello' }]);
    expect(r.structuredContent).toBeUndefined();
    const m = r._meta ?? {};
    expect(m['gatehouse/status']).toBe('observed');
    const id = m['gatehouse/invocationId'] as string;
    expect(m['gatehouse/provenance']).toMatchObject({
      tool: 'everything/echo',
      version: '1.0.0',
      invocation: id,
      untrusted: true,
    });

    const record = await g.inject<InvocationRecord>('GET', `/v1/invocations/${id}`, {
      token: g.tokens.agent,
    });
    expect(record.status).toBe(200);
    expect(record.body.status).toBe('observed');
    expect(record.body.tool).toMatchObject({ id: 'everything/echo', version: '1.0.0' });
    await verifiedReceipt(g, id, g.tokens.agent);
  });
});

describe('a release that keeps upstream names', () => {
  it("offers server-everything's tools under their own names, and calls them by those names", async () => {
    const { token } = await addAgent(
      g,
      'upstream-names',
      [
        { id: 'everything/echo', version: '1.0.0' },
        { id: 'everything/get-sum', version: '1.0.0' },
        { id: 'demo/echo', version: '1.0.0' },
      ],
      'production',
      { mcp: { toolNames: 'upstream' } },
    );
    const client = await connect(token);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    // An upstream tool keeps its name; a tool of no upstream keeps its versioned one.
    expect(names).toEqual(['demo_echo__1_0_0', 'echo', 'get-sum']);
    const r = await client.callTool({ name: 'echo', arguments: { message: 'by its own name' } });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.content).toEqual([{ type: 'text', text: 'Echo: by its own name' }]);
    expect(r._meta?.['gatehouse/provenance']).toMatchObject({ tool: 'everything/echo' });
    // The versioned name is not an alias.
    await expect(
      client.callTool({ name: 'everything_echo__1_0_0', arguments: { message: 'x' } }),
    ).rejects.toThrow(/Unknown tool/);
    // Its servers' prompts keep their own names too (for gets and completions); the labelled
    // form still works.
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toEqual(expect.arrayContaining(['simple-prompt', 'completable-prompt']));
    expect(prompts.filter((n) => n.startsWith('everything__'))).toEqual([]);
    for (const name of ['simple-prompt', 'everything__simple-prompt']) {
      const got = await client.getPrompt({ name });
      expect(got.messages[0]?.content).toEqual({
        type: 'text',
        text: 'This is a simple prompt without arguments.',
      });
    }
    const dept = await client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(dept.completion.values).toEqual(['Engineering']);
    const listed = await g.inject<{ releases: { mcp?: unknown }[] }>(
      'GET',
      '/v1/agent-releases?agent=upstream-names',
      { token: g.tokens.admin },
    );
    expect(listed.body.releases[0]!.mcp).toEqual({ toolNames: 'upstream' });
  });

  it('refuses a naming it does not know, saying where', async () => {
    const res = await g.inject<{ error: { message: string } }>('POST', '/v1/events', {
      token: g.tokens.admin,
      body: {
        id: 'test:agent/bad-names@1.0.0',
        type: 'AgentReleasePublished',
        data: {
          agentId: 'bad-names',
          version: '1.0.0',
          closure: [{ id: 'demo/echo', version: '1.0.0' }],
          policy: { maxClass: 'read' },
          mcp: { toolNames: 'short' },
        },
      },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toMatch(/\/data\/mcp\/toolNames/);
  });
});

describe("an upstream tool's output schema", () => {
  it('is kept in tools/list, and the structured answer the SDK client checks against it passes through', async () => {
    const bound = await g.gateway.mcp.bind('acme', serverId, 'maintainer', {
      tool: 'get-structured-content',
      class: 'read',
      descriptor: { id: 'everything/weather', version: '1.0.0' },
    });
    const token = await publishAgent(g, 'weather-agent', [
      bound.descriptor as unknown as Record<string, unknown>,
    ]);
    const client = await connect(token);
    const [tool] = (await client.listTools()).tools;
    expect(tool?.outputSchema).toMatchObject({
      type: 'object',
      properties: { temperature: { type: 'number' }, humidity: { type: 'number' } },
    });
    const r = await client.callTool({
      name: tool!.name,
      arguments: { location: 'Chicago' },
    });
    expect(r.isError, text(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
  });
});

describe('a gated upstream tool over /mcp', () => {
  it('a shared-write binding of server-everything asks for approval, then calls upstream once', async () => {
    const bound = await g.gateway.mcp.bind('acme', serverId, 'maintainer', {
      tool: 'get-tiny-image',
      class: 'shared-write',
      descriptor: { id: 'everything/tiny-image', version: '1.0.0' },
    });
    const token = await publishAgent(g, 'gated-agent', [
      bound.descriptor as unknown as Record<string, unknown>,
    ]);
    const client = await connect(token);
    const name = 'everything_tiny-image__1_0_0';
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([name]);

    const first = await client.callTool({ name, arguments: {} });
    const m = first._meta ?? {};
    expect(m['gatehouse/status']).toBe('awaiting_approval');
    expect(first.content.some((c) => c.type === 'image')).toBe(false);
    const approvalId = m['gatehouse/approvalId'] as string;
    const approved = await g.inject('POST', `/v1/approvals/${approvalId}/approve`, {
      token: g.tokens.reviewer,
      body: {},
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    const second = await client.callTool({
      name,
      arguments: {},
      _meta: { 'gatehouse/approvalId': approvalId },
    });
    expect(second._meta?.['gatehouse/status'], JSON.stringify(second)).toBe('observed');
    expect(second._meta?.['gatehouse/invocationId']).toBe(m['gatehouse/invocationId']);
    expect(second.content.some((c) => c.type === 'image')).toBe(true);
    const record = await g.inject<InvocationRecord>(
      'GET',
      `/v1/invocations/${String(m['gatehouse/invocationId'])}`,
      { token: g.tokens.operator },
    );
    expect(record.body.approval).toMatchObject({ id: approvalId });
    expect(record.body.trace.map((t) => `${t.stage}:${t.decision}`)).toContain('execute:observed');
  });
});

describe('resources and prompts of the upstreams the closure reaches', () => {
  it('advertises resources and prompts, lists and reads a resource of server-everything', async () => {
    const client = await connect();
    const caps = client.getServerCapabilities();
    expect(caps?.resources).toBeDefined();
    expect(caps?.prompts).toBeDefined();

    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    for (const r of resources) expect(r._meta?.['gatehouse/upstream']).toEqual(upstream());
    const doc = resources.find((r) => r.uri.startsWith('demo://resource/static/document/'));
    expect(doc).toBeDefined();

    const read = await client.readResource({ uri: doc!.uri });
    expect(read.contents[0]?.uri).toBe(doc!.uri);
    const first = read.contents[0] as { text?: string; blob?: string };
    expect((first.text ?? first.blob ?? '').length).toBeGreaterThan(0);
    expect(read._meta?.['gatehouse/upstream']).toEqual(upstream());

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.length).toBeGreaterThan(0);
    expect(resourceTemplates[0]?._meta?.['gatehouse/upstream']).toEqual(upstream());

    // An unknown URI is the upstream's refusal, as a JSON-RPC error.
    const err = await client.readResource({ uri: 'demo://no/such/resource' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProtocolError);
  });

  it('lists prompts named <server>__<prompt> and gets one from the upstream', async () => {
    const client = await connect();
    const { prompts } = await client.listPrompts();
    const names = prompts.map((p) => p.name);
    expect(names).toContain('everything__simple-prompt');
    for (const p of prompts) {
      expect(p.name).toMatch(/^everything__/);
      expect(p._meta?.['gatehouse/upstream']).toEqual(upstream());
    }
    const got = await client.getPrompt({ name: 'everything__simple-prompt' });
    expect(got.messages[0]?.content).toEqual({
      type: 'text',
      text: 'This is a simple prompt without arguments.',
    });
    expect(got._meta?.['gatehouse/upstream']).toEqual(upstream());

    const unknown = await client.getPrompt({ name: 'other__simple-prompt' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(unknown).toBeInstanceOf(ProtocolError);
    expect((unknown as ProtocolError).code).toBe(-32602);
  });

  it("completes a prompt's arguments and a resource template's variables from the upstream", async () => {
    const client = await connect();
    const prompt = { type: 'ref/prompt' as const, name: 'everything__completable-prompt' };
    const dept = await client.complete({
      ref: prompt,
      argument: { name: 'department', value: 'E' },
    });
    expect(dept.completion.values).toEqual(['Engineering']);
    // The context (arguments chosen so far) reaches the upstream too.
    const lead = await client.complete({
      ref: prompt,
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Sales' } },
    });
    expect(lead.completion.values).toEqual(['David', 'Eve', 'Frank']);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' },
      argument: { name: 'resourceId', value: '7' },
    });
    expect(template.completion.values).toEqual(['7']);
    // A prompt of no reachable server gets no suggestions, not another server's.
    const other = await client.complete({
      ref: { type: 'ref/prompt', name: 'other__completable-prompt' },
      argument: { name: 'department', value: 'E' },
    });
    expect(other.completion.values).toEqual([]);
  });

  it('shows an agent whose closure reaches no upstream no resources and no prompts', async () => {
    const plain = await addAgent(g, 'plain-agent');
    const client = await connect(plain.token);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['demo_echo__1_0_0']);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    const read = await client
      .readResource({ uri: 'demo://resource/static/document/architecture.md' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(read).toBeInstanceOf(ProtocolError);
    const prompt = await client.getPrompt({ name: 'everything__simple-prompt' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(prompt).toBeInstanceOf(ProtocolError);
  });
});
