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
import { collectGarbage, timeSequential } from './measure.js';
import type { Timing } from './measure.js';

const GOVERNED_TOOL = 'everything_echo__1_0_0';

const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/** The governed, the direct and the proxied echo, sequential, after `warmup` calls each. */
export async function mcpBench(
  dataDir: string,
  children: ChildServer[],
  calls: number,
  warmup: number,
): Promise<{ governed: Timing; direct: Timing; proxied: Timing }> {
  // The ungoverned sides first, so the governed side's checkpoints cannot land in theirs.
  const direct = await measureUngoverned(spawnEverything, children, calls, warmup);
  collectGarbage();
  const proxied = await measureUngoverned(spawnSupergateway, children, calls, warmup);
  collectGarbage();
  const governed = await measureGoverned(dataDir, children, calls, warmup);
  return { governed, direct, proxied };
}

async function measureGoverned(
  dataDir: string,
  children: ChildServer[],
  calls: number,
  warmup: number,
): Promise<Timing> {
  const server = await spawnServer([cli, 'serve', '--demo', '--data', dataDir, '--port', '0'], {
    GATEHOUSE_LOG_REQUESTS: '0',
  });
  children.push(server);
  let client: Client | undefined;
  try {
    const tokens = JSON.parse(
      await readFile(join(dataDir, 'demo-tokens.json'), 'utf8'),
    ) as DemoTokens;
    client = await connect(`${server.url}/mcp`, { authorization: `Bearer ${tokens.agent}` });
    const listed = (await client.listTools()).tools.map((t) => t.name);
    if (!listed.includes(GOVERNED_TOOL)) {
      throw new Error(`/mcp does not list ${GOVERNED_TOOL}; it lists ${listed.join(', ')}`);
    }
    const run = randomUUID();
    let lastInvocation = '';
    const c = client;
    const call = async (key: string): Promise<void> => {
      const r = await c.callTool({
        name: GOVERNED_TOOL,
        arguments: { message: 'hello' },
        _meta: { 'gatehouse/idempotencyKey': key },
      });
      const meta = r._meta ?? {};
      if (r.isError || meta['gatehouse/status'] !== 'observed') {
        throw new Error(`governed echo: ${JSON.stringify(r).slice(0, 500)}`);
      }
      lastInvocation = meta['gatehouse/invocationId'] as string;
    };
    await timeSequential(warmup, (i) => call(`${run}-warm-${i}`));
    collectGarbage();
    const timing = await timeSequential(calls, (i) => call(`${run}-seq-${i}`));
    await checkReceipt(server.url, tokens.agent, lastInvocation);
    return timing;
  } finally {
    await client?.close().catch(() => undefined);
    await server.close();
  }
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
async function measureUngoverned(
  spawn: () => Promise<ChildServer>,
  children: ChildServer[],
  calls: number,
  warmup: number,
): Promise<Timing> {
  const server = await spawn();
  children.push(server);
  let client: Client | undefined;
  try {
    client = await connect(`${server.url}/mcp`, {});
    const c = client;
    const call = async (): Promise<void> => {
      const r = await c.callTool({
        name: 'echo',
        arguments: { message: 'hello' },
      });
      if (r.isError) throw new Error(`echo at ${server.url}: ${JSON.stringify(r).slice(0, 500)}`);
    };
    await timeSequential(warmup, call);
    collectGarbage();
    return await timeSequential(calls, call);
  } finally {
    await client?.close().catch(() => undefined);
    await server.close();
  }
}

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'gatehouse-bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
