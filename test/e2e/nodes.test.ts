import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, runCli, spawnServer } from '../helpers/cli.js';
import { useNodes } from '../helpers/nodes.js';
import type { GatewayNodes } from '../helpers/nodes.js';
import { missingPostgres, queryPostgres } from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';
import { postThenDrop, resumeStream, text } from '../helpers/mcp-client.js';
import { SseClient } from '../helpers/sse.js';

// Three real `gatehouse serve` processes on one real PostgreSQL database: whichever node a request
// lands on, the gateway behaves as one.

const echo = (message: string) => ({
  tool: { id: 'demo/echo', version: '1.0.0' },
  input: { message },
  environment: 'dev',
});
const deploy = (version: string) => ({
  tool: { id: 'demo/flaky-deploy', version: '1.0.0' },
  input: { service: 'web', version },
  environment: 'prod',
});

/** The deploys demo/flaky-deploy made, on every node (each logs to its own data directory). */
function deploysOf(g: GatewayNodes): { version: string }[] {
  return g.dirs.flatMap((dir) => {
    const file = join(dir, 'demo-deployments.jsonl');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { version: string });
  });
}

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))(
  'three gateway nodes on one PostgreSQL',
  () => {
    const cluster = useNodes(3);

    it('executes a call sent with one idempotency key to three nodes at once once, and all answer it', async () => {
      const g = cluster.get();
      const db = g.db;
      const answers = await Promise.all(
        g.urls.map((url) =>
          api<InvocationRecord>(url, 'POST', '/v1/invocations', g.tokens.agent, echo('hi'), 'k-1'),
        ),
      );
      for (const a of answers) expect(a.body.status, JSON.stringify(a.body)).toBe('observed');
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      const rows = await queryPostgres<{ n: string }>(
        db,
        `select count(*) as n from invocations where idempotency_key = 'k-1'`,
      );
      expect(Number(rows[0]!.n)).toBe(1);
      // One execution: one record of the execute stage in the log.
      const executed = await queryPostgres<{ n: string }>(
        db,
        `select count(*) as n from audit_records where record like $1 and record like '%"execute"%'`,
        [`%${answers[0]!.body.id}%`],
      );
      expect(Number(executed[0]!.n)).toBe(1);
    });

    it('appends the calls of all three nodes to one audit tree, which audit verify passes and every node proves', async () => {
      const g = cluster.get();
      const db = g.db;
      const calls = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          api<InvocationRecord>(
            g.urls[i % 3]!,
            'POST',
            '/v1/invocations',
            g.tokens.agent,
            echo(`n${i}`),
            `audit-${i}`,
          ),
        ),
      );
      for (const c of calls) expect(c.body.status).toBe('observed');
      const [head] = await queryPostgres<{ size: string }>(
        db,
        `select size from audit_heads where tenant = 'acme'`,
      );
      const indices = await queryPostgres<{ idx: string }>(
        db,
        `select idx from audit_records where tenant = 'acme' order by idx`,
      );
      // One tree: indices 0..size-1, no gap and no duplicate, whatever node appended.
      expect(indices.map((r) => Number(r.idx))).toEqual(
        Array.from({ length: Number(head!.size) }, (_, i) => i),
      );

      // A receipt signed by any node verifies with the key set of any other.
      const receipt = await api(
        g.urls[1]!,
        'GET',
        `/v1/invocations/${calls[1]!.body.id}/receipt`,
        g.tokens.agent,
      );
      expect(receipt.status).toBe(200);
      const file = join(g.dirs[0]!, 'receipt.json');
      writeFileSync(file, JSON.stringify(receipt.body));
      for (const url of [g.urls[0]!, g.urls[2]!]) {
        const checked = await runCli([
          'receipt',
          'verify',
          file,
          '--keys',
          `${url}/v1/receipt-keys`,
        ]);
        expect(checked.stderr).toBe('');
        expect(checked.code).toBe(0);
      }
      const keySets = await Promise.all(
        g.urls.map((url) => api<{ keys: { kid: string }[] }>(url, 'GET', '/v1/receipt-keys')),
      );
      for (const k of keySets) expect(k.body).toEqual(keySets[0]!.body);
      expect(keySets[0]!.body.keys).toHaveLength(1);

      // Each node's checkpoint is of the one tree.
      const checkpoints = await Promise.all(
        g.urls.map((url) =>
          api<{ treeSize: number; rootHash: string }>(
            url,
            'GET',
            '/v1/audit/checkpoint',
            g.tokens.operator,
          ),
        ),
      );
      const size = Math.max(...checkpoints.map((c) => c.body.treeSize));
      const proof = await api<{ rootHash: string }>(
        g.urls[2]!,
        'GET',
        `/v1/audit/proof?index=0&size=${size}`,
        g.tokens.operator,
      );
      expect(proof.status).toBe(200);
      const largest = checkpoints.find((c) => c.body.treeSize === size)!;
      expect(proof.body.rootHash).toBe(largest.body.rootHash);

      const verified = await runCli(['audit', 'verify', '--db', db]);
      expect(verified.stderr).toBe('');
      expect(verified.code).toBe(0);
      expect(verified.stdout).toMatch(/tenant acme: OK, \d+ records/);
    });

    it('runs a call approved through node A and resumed through node B once, though resumed on all three at once', async () => {
      const g = cluster.get();
      const [a, b, c] = g.urls as [string, string, string];
      const waiting = await api<InvocationRecord & { approvalId: string }>(
        a,
        'POST',
        '/v1/invocations',
        g.tokens.agent,
        deploy('1.2.3'),
        'deploy-1',
      );
      expect(waiting.status, JSON.stringify(waiting.body)).toBe(202);
      expect(waiting.body.status).toBe('awaiting_approval');
      const approved = await api<{ status: string }>(
        a,
        'POST',
        `/v1/approvals/${waiting.body.approvalId}/approve`,
        g.tokens.reviewer,
        {},
      );
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body.status).toBe('approved');

      const resumed = await Promise.all(
        [b, c, a].map((url) =>
          api<InvocationRecord>(
            url,
            'POST',
            '/v1/invocations',
            g.tokens.agent,
            { ...deploy('1.2.3'), approvalId: waiting.body.approvalId },
            'deploy-1',
          ),
        ),
      );
      // One node ran it; the others answer with its record (running or already observed).
      for (const r of resumed) {
        expect(r.body.id, JSON.stringify(r.body)).toBe(waiting.body.id);
        expect(['running', 'observed']).toContain(r.body.status);
      }
      expect(resumed.some((r) => r.body.status === 'observed')).toBe(true);
      const done = await api<InvocationRecord>(
        c,
        'GET',
        `/v1/invocations/${waiting.body.id}`,
        g.tokens.agent,
      );
      expect(done.body.status).toBe('observed');
      expect(done.body.approval?.id).toBe(waiting.body.approvalId);
      expect(deploysOf(g).map((d) => d.version)).toEqual(['1.2.3']);

      // The approval is used: another call cannot spend it, on any node.
      const reuse = await api<{ error: { code: string } }>(
        c,
        'POST',
        '/v1/invocations',
        g.tokens.agent,
        { ...deploy('1.2.3'), approvalId: waiting.body.approvalId },
        'deploy-2',
      );
      expect(reuse.status).toBeGreaterThanOrEqual(400);
      expect(deploysOf(g)).toHaveLength(1);
    });

    it('streams to a client on node C the events written through node A, in order, resuming by Last-Event-ID', async () => {
      const g = cluster.get();
      const [a, , c] = g.urls as [string, string, string];
      const stream = await SseClient.connect(c, g.tokens.operator);
      try {
        expect(stream.status).toBe(200);
        const made: string[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await api<InvocationRecord>(
            a,
            'POST',
            '/v1/invocations',
            g.tokens.agent,
            echo(`s${i}`),
            `stream-${i}`,
          );
          expect(r.body.status).toBe('observed');
          made.push(r.body.id);
        }
        const seen = await stream.take(6, 20_000);
        expect(seen.map((f) => [f.event, f.data.subject])).toEqual(
          made.flatMap((id) => [
            ['ToolInvocationRequested', `invocation/${id}`],
            ['ToolInvocationCompleted', `invocation/${id}`],
          ]),
        );
        const ids = seen.map((f) => f.id);
        expect(ids).toEqual([...ids].sort((x, y) => x - y));

        // Reconnect to node B from the first frame: the rest again, same ids, same order.
        const resumed = await SseClient.connect(g.urls[1]!, g.tokens.operator, {
          lastEventId: ids[0]!,
        });
        try {
          const again = await resumed.take(ids.length - 1, 20_000);
          expect(again.map((f) => f.id)).toEqual(ids.slice(1));
        } finally {
          resumed.close();
        }
      } finally {
        stream.close();
      }
    });

    it("serves an agent's MCP session whichever node each request lands on, and ends it for all", async () => {
      const g = cluster.get();
      // A round-robin load balancer in the client: each HTTP request goes to the next node.
      const landed: string[] = [];
      let turn = 0;
      const roundRobin = (input: string | URL | Request, init?: RequestInit) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        const node = new URL(g.urls[turn++ % g.urls.length]!);
        url.host = node.host;
        landed.push(node.host);
        return fetch(url, init);
      };
      const transport = new StreamableHTTPClientTransport(new URL(`${g.urls[0]!}/mcp`), {
        fetch: roundRobin,
        requestInit: { headers: { authorization: `Bearer ${g.tokens.agent}` } },
      });
      const client = new Client({ name: 'gatehouse-nodes', version: '1.0.0' });
      await client.connect(transport);
      const sessionId = transport.sessionId!;
      expect(typeof sessionId).toBe('string');
      const { tools } = await client.listTools();
      const echoTool = tools.find(
        (t) => (t._meta?.['gatehouse/tool'] as { id?: string } | undefined)?.id === 'demo/echo',
      );
      expect(echoTool).toBeDefined();
      for (let i = 0; i < 4; i++) {
        const result = await client.callTool({
          name: echoTool!.name,
          arguments: { message: `via mcp ${i}` },
          _meta: { 'gatehouse/idempotencyKey': `mcp-${i}` },
        });
        expect(result.isError, JSON.stringify(result)).toBeFalsy();
        expect(text(result)).toContain(`via mcp ${i}`);
      }
      // Every node served requests of the one session.
      expect(new Set(landed).size).toBe(3);

      // A call's stream dropped on node A is resumed on node B: its events are in the database.
      const onA = { url: `${g.urls[0]!}/mcp`, token: g.tokens.agent, sessionId };
      const posted = await postThenDrop(onA, {
        jsonrpc: '2.0',
        id: 70,
        method: 'tools/call',
        params: { name: echoTool!.name, arguments: { message: 'resumed on B' } },
      });
      const { lastEventId } = posted;
      expect(posted.first).toMatch(/^retry: \d+$/m);
      posted.drop();
      let replayed = '';
      // Node B replays what is stored and closes; the client asks again until the answer is there.
      for (let i = 0; i < 50 && !replayed.includes('"id":70'); i++) {
        const resumed = await resumeStream({ ...onA, url: `${g.urls[1]!}/mcp` }, lastEventId!);
        expect(resumed.status).toBe(200);
        replayed = await resumed.text();
        if (!replayed.includes('"id":70')) await new Promise((r) => setTimeout(r, 100));
      }
      expect(replayed).toContain('resumed on B');

      // Ended on one node (DELETE), it is gone on every node.
      await transport.terminateSession();
      for (const url of g.urls) {
        const res = await fetch(`${url}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${g.tokens.agent}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': sessionId,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        });
        expect(res.status).toBe(404);
      }
      await client.close();
    });

    it('refuses to start a node given another master key than the one that sealed the signing keys', async () => {
      const g = cluster.get();
      const dir = mkdtempSync(join(tmpdir(), 'gatehouse-node-'));
      try {
        const other = randomBytes(32).toString('base64');
        const started = spawnServer(dir, 60_000, { ...g.env, GATEHOUSE_MASTER_KEY: other });
        await expect(started).rejects.toThrow(
          /signing keys in the database are sealed with master key [0-9a-f]{16}, but this node's master key is [0-9a-f]{16}/,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
