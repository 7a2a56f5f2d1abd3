import { ProtocolError } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditLog } from '../../src/audit/index.js';
import type { JwkSet } from '../../src/audit/index.js';
import { canonicalBytes, canonicalDigest, sha256Hex } from '../../src/core/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { withAuditStoreOf } from '../helpers/stored-rows.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { addAgent } from '../helpers/agents.js';
import { logSize as auditLogSize, recordsSince as records } from '../helpers/audit-records.js';

let g: DemoGateway;
let url: string;
let serverId: string;
let agent: { id: string; release: { id: string; version: string } };
const clients: Client[] = [];

beforeAll(async () => {
  g = await startDemoGateway({ listen: true });
  url = `${g.url!}/mcp`;
  serverId = (await g.gateway.mcp.list('acme')).find((s) => s.name === 'everything')!.id;
  const p = g.gateway.directory.authenticate(g.tokens.agent)!;
  agent = { id: p.id, release: p.agent! };
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await g?.close();
});

async function connect(token = g.tokens.agent): Promise<{ client: Client; session: string }> {
  const { client, transport } = await connectMcp(url, token);
  clients.push(client);
  return { client, session: transport.sessionId! };
}

const recordsSince = (from: number) => records(g, from);
const logSize = () => auditLogSize(g);

/** What a recorded answer's `content` must be: size and digest of its JCS without `_meta`. */
function contentOf(answer: Record<string, unknown>): { bytes: number; sha256: string } {
  const { _meta: _, ...rest } = answer;
  const bytes = canonicalBytes(rest);
  return { bytes: bytes.length, sha256: sha256Hex(bytes) };
}

async function refusal(p: Promise<unknown>): Promise<ProtocolError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProtocolError);
  return err as ProtocolError;
}

describe('what an agent reads through /mcp is recorded in the audit log', () => {
  it('records one mcp.resource.read per resource read, with the digest of what the agent got', async () => {
    const { client, session } = await connect();
    const { resources } = await client.listResources();
    const doc = resources.find((r) => r.uri.startsWith('demo://resource/static/document/'))!;
    const before = await logSize();

    const read = await client.readResource({ uri: doc.uri });
    expect(read.contents[0]?.uri).toBe(doc.uri);

    const records = await recordsSince(before);
    expect(records).toHaveLength(1);
    expect(records[0]!.record).toMatchObject({
      type: 'mcp.resource.read',
      subject: `mcp-server/${serverId}`,
      actor: agent.id,
    });
    expect(records[0]!.record.data).toEqual({
      serverId,
      uri: doc.uri,
      agent: agent.release,
      sessionSha256: sha256Hex(session),
      outcome: 'ok',
      content: contentOf(read),
    });
  });

  it('records one mcp.prompt.get with the digest of the arguments, not their values, and redacts the answer', async () => {
    const { client, session } = await connect();
    // A GitHub-token-shaped city: args-prompt echoes it, so the answer carries a known secret pattern.
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    const args = { city: token, state: 'Kansas' };
    const before = await logSize();

    const got = await client.getPrompt({ name: 'everything__args-prompt', arguments: args });
    const text = (got.messages[0]?.content as { text: string }).text;
    expect(text).toBe("What's weather in [REDACTED:github-token], Kansas?");

    const records = await recordsSince(before);
    expect(records).toHaveLength(1);
    const r = records[0]!;
    expect(r.record).toMatchObject({
      type: 'mcp.prompt.get',
      subject: `mcp-server/${serverId}`,
      actor: agent.id,
    });
    expect(r.record.data).toEqual({
      serverId,
      name: 'everything__args-prompt',
      prompt: 'args-prompt',
      argumentsSha256: canonicalDigest(args),
      agent: agent.release,
      sessionSha256: sha256Hex(session),
      outcome: 'ok',
      content: contentOf(got),
      redactions: [{ kind: 'github-token', count: 1 }],
    });
    expect(r.leaf).not.toContain(token);
    expect(r.leaf).not.toContain('Kansas');
  });

  it("records the upstream's refusal of an unknown URI as an error", async () => {
    const { client } = await connect();
    const before = await logSize();
    await refusal(client.readResource({ uri: 'demo://no/such/resource' }));
    const records = await recordsSince(before);
    expect(records).toHaveLength(1);
    expect(records[0]!.record.data).toMatchObject({
      serverId,
      uri: 'demo://no/such/resource',
      outcome: 'error',
      code: 'INVALID_INPUT',
    });
    expect(records[0]!.record.data).not.toHaveProperty('content');
  });

  it('records as refusals the reads of an agent whose closure does not reach the server', async () => {
    const plain = await addAgent(g, 'reads-plain');
    const { client, session } = await connect(plain.token);
    const uri = 'demo://resource/static/document/architecture.md';
    const before = await logSize();

    const named = await refusal(
      client.readResource({ uri, _meta: { 'gatehouse/upstream': 'everything' } }),
    );
    expect(named.code).toBe(-32602);
    const unnamed = await refusal(client.readResource({ uri }));
    expect(unnamed.code).toBe(-32602);
    const prompt = await refusal(client.getPrompt({ name: 'everything__simple-prompt' }));
    expect(prompt.code).toBe(-32602);

    const records = (await recordsSince(before)).map(
      ({ record: { type, subject, actor, data } }) => ({
        type,
        subject,
        actor,
        data,
      }),
    );
    const actor = plain.id;
    const data = {
      agent: { id: 'reads-plain', version: '1.0.0' },
      sessionSha256: sha256Hex(session),
      outcome: 'refused',
      code: 'INVALID_INPUT',
    };
    expect(records).toEqual([
      {
        type: 'mcp.resource.read',
        subject: `mcp-server/${serverId}`,
        actor,
        data: { ...data, serverId, uri, reason: 'server-not-reachable' },
      },
      {
        type: 'mcp.resource.read',
        subject: `principal/${actor}`,
        actor,
        data: { ...data, serverId: null, uri, reason: 'resource-not-listed' },
      },
      {
        type: 'mcp.prompt.get',
        subject: `mcp-server/${serverId}`,
        actor,
        data: {
          ...data,
          serverId,
          name: 'everything__simple-prompt',
          argumentsSha256: canonicalDigest({}),
          reason: 'prompt-not-reachable',
        },
      },
    ]);
  });

  it('leaves a log that still verifies offline', async () => {
    const jwks = (await g.inject<JwkSet>('GET', '/v1/receipt-keys')).body;
    const size = await logSize();
    await g.stop();
    const verdict = await withAuditStoreOf(g.dataDir, (store) =>
      verifyAuditLog(store, 'acme', jwks),
    );
    if (!verdict.ok) throw new Error(`index ${verdict.index}: ${verdict.reason}`);
    // Closing may append (upstream connections end); the checkpoints taken above must match.
    expect(verdict.size).toBeGreaterThanOrEqual(size);
    expect(verdict.checkpoints).toBeGreaterThan(0);
  });
});
