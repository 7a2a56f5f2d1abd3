/**
 * MCP: server-everything's `echo` through Gatehouse's `/mcp` (full pipeline, receipt, the upstream
 * over stdio), beside the same SDK client calling server-everything directly over Streamable HTTP,
 * and through an ungoverned HTTP→stdio proxy (supergateway). Every server runs as a child process,
 * so client and server never share an event loop.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { verifyReceipt } from '../src/audit/index.js';
import type { JwkSet } from '../src/audit/index.js';
import type { DemoTokens } from '../src/app/index.js';
import { spawnEverything, spawnSupergateway } from './everything.js';
import { spawnServer } from './load.js';
import type { ChildServer } from './load.js';
import { collectGarbage, timeInterleaved, timeSequential } from './measure.js';
import type { Timing } from './measure.js';

const GOVERNED_TOOL = 'everything_echo__1_0_0';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/**
 * The governed, the direct and the proxied echo, sequential, after `warmup` calls each. The three
 * run side by side and take turns call by call, so load on the machine falls on all of them alike.
 */
export async function mcpBench(
  dataDir: string,
  children: ChildServer[],
  calls: number,
  warmup: number,
): Promise<{ governed: Timing; direct: Timing; proxied: Timing }> {
  const clients: Client[] = [];
  const before = children.length;
  try {
    const direct = await ungoverned(spawnEverything, children, clients);
    const proxied = await ungoverned(spawnSupergateway, children, clients);
    const governed = await governedEcho(dataDir, children, clients);
    const sides = [governed.call, direct, proxied];
    for (const call of sides) await timeSequential(warmup, (i) => call(`warm-${i}`));
    collectGarbage();
    const [g, d, p] = await timeInterleaved(
      calls,
      sides.map((call) => (i) => call(`seq-${i}`)),
    );
    await governed.checkLastReceipt();
    return { governed: g!, direct: d!, proxied: p! };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    // Stopped now, so the benchmarks after these do not share the machine with them.
    await Promise.all(children.slice(before).map((c) => c.close()));
  }
}

/** One echo call; `key` names it (the governed side makes it the call's idempotency key). */
type EchoCall = (key: string) => Promise<void>;

/** A demo gateway serving the governed echo at `/mcp`, and a check of its last call's receipt. */
async function governedEcho(
  dataDir: string,
  children: ChildServer[],
  clients: Client[],
): Promise<{ call: EchoCall; checkLastReceipt: () => Promise<void> }> {
  const server = await spawnServer([cli, 'serve', '--demo', '--data', dataDir, '--port', '0'], {
    GATEHOUSE_LOG_REQUESTS: '0',
  });
  children.push(server);
  const tokens = JSON.parse(
    await readFile(join(dataDir, 'demo-tokens.json'), 'utf8'),
  ) as DemoTokens;
  const client = await connect(`${server.url}/mcp`, { authorization: `Bearer ${tokens.agent}` });
  clients.push(client);
  const listed = (await client.listTools()).tools.map((t) => t.name);
  if (!listed.includes(GOVERNED_TOOL)) {
    throw new Error(`/mcp does not list ${GOVERNED_TOOL}; it lists ${listed.join(', ')}`);
  }
  const run = randomUUID();
  let lastInvocation = '';
  const call = async (key: string): Promise<void> => {
    const r = await client.callTool({
      name: GOVERNED_TOOL,
      arguments: { message: 'hello' },
      _meta: { 'gatehouse/idempotencyKey': `${run}-${key}` },
    });
    const meta = r._meta ?? {};
    if (r.isError || meta['gatehouse/status'] !== 'observed') {
      throw new Error(`governed echo: ${JSON.stringify(r).slice(0, 500)}`);
    }
    lastInvocation = meta['gatehouse/invocationId'] as string;
  };
  return { call, checkLastReceipt: () => checkReceipt(server.url, tokens.agent, lastInvocation) };
}

/** The last governed call has a signed receipt that verifies against the gateway's keys. */
async function checkReceipt(url: string, token: string, invocation: string): Promise<void> {
  const keys = (await (await fetch(`${url}/v1/receipt-keys`)).json()) as JwkSet;
  const res = await fetch(`${url}/v1/invocations/${invocation}/receipt`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!res.ok) throw new Error(`receipt of ${invocation}: HTTP ${res.status}`);
  const verdict = verifyReceipt(await res.json(), keys);
  if (!verdict.ok) throw new Error(`receipt of ${invocation} does not verify`);
}

/** server-everything's own `echo` at `/mcp` of the server that `spawn` starts. */
async function ungoverned(
  spawn: () => Promise<ChildServer>,
  children: ChildServer[],
  clients: Client[],
): Promise<EchoCall> {
  const server = await spawn();
  children.push(server);
  const client = await connect(`${server.url}/mcp`, {});
  clients.push(client);
  return async () => {
    const r = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    if (r.isError) throw new Error(`echo at ${server.url}: ${JSON.stringify(r).slice(0, 500)}`);
  };
}

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'gatehouse-bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
