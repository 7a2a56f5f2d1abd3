/**
 * The tools the memory bench calls, published on a demo gateway: `bench/http-flood` (an `http`
 * tool GETting the flood server), `bench/mcp-flood` (the flood upstream's tool, bound), and the
 * demo's `demo/sh`, in the closure of an agent of their own, whose principal is returned.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Gateway } from '../src/app/index.js';
import type { Principal } from '../src/tenancy/index.js';

const TENANT = 'acme';
const ACTOR = 'bench-memory';
const VERSION = '1.0.0';

/**
 * The flood upstream, copied under node_modules: a sandboxed stdio server sees only the directory
 * of its script (or the node_modules it is in), and it needs the SDK beside it.
 */
function floodUpstream(): string {
  const built = fileURLToPath(new URL('./flood-upstream.js', import.meta.url));
  const copy = fileURLToPath(
    new URL('../../node_modules/.cache/gatehouse-bench/flood-upstream.mjs', import.meta.url),
  );
  mkdirSync(dirname(copy), { recursive: true });
  copyFileSync(built, copy);
  return copy;
}

/** Publishes the tools and the agent; the HTTP tool reaches `127.0.0.1:httpPort`. */
export async function publishMemoryTools(g: Gateway, httpPort: number): Promise<Principal> {
  const http = {
    id: 'bench/http-flood',
    version: VERSION,
    kind: 'http',
    description: 'GETs a text of `bytes` bytes from the bench flood server.',
    inputSchema: {
      type: 'object',
      required: ['bytes'],
      properties: { bytes: { type: 'integer', minimum: 1 } },
    },
    sideEffect: { class: 'read' },
    execution: { method: 'GET', url: `http://127.0.0.1:${httpPort}/{?bytes}` },
    timeoutMs: 30_000,
  };
  const server = await g.mcp.register(TENANT, ACTOR, {
    name: 'flood',
    transport: { type: 'stdio', command: process.execPath, args: [floodUpstream()] },
  });
  await g.mcp.verify(TENANT, server.id, ACTOR);
  const { descriptor: mcp } = await g.mcp.bind(TENANT, server.id, ACTOR, {
    tool: 'flood',
    class: 'read',
    descriptor: { id: 'bench/mcp-flood', version: VERSION },
  });
  await g.mcp.activate(TENANT, server.id, ACTOR);
  await g.registry.applyEvents(
    TENANT,
    [
      ...[http, mcp].map((d) => ({
        id: `bench:${d.id}@${VERSION}`,
        type: 'AssetReleasePublished',
        data: { assetId: d.id, version: VERSION, descriptor: d, inFlightPolicy: 'finish' },
      })),
      {
        id: `bench:agent/bench-memory@${VERSION}`,
        type: 'AgentReleasePublished',
        data: {
          agentId: 'bench-memory',
          version: VERSION,
          closure: [http, mcp, { id: 'demo/sh', version: VERSION }].map((d) => ({
            id: d.id,
            version: d.version,
          })),
          policy: { maxClass: 'production' },
        },
      },
    ],
    ACTOR,
  );
  const { token } = await g.directory.addPrincipal(
    {
      tenant: TENANT,
      name: 'bench-memory',
      roles: ['agent'],
      project: 'web',
      agent: { id: 'bench-memory', version: VERSION },
    },
    ACTOR,
    { ttl: '1d', label: 'bench' },
  );
  const principal = g.directory.authenticate(token);
  if (!principal) throw new Error('the bench agent token does not authenticate');
  return principal;
}
