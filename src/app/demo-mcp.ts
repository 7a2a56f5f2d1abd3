import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SideEffectClass } from '../core/index.js';
import type { Gateway } from './gateway.js';

/** The tools of server-everything the demo binds, and the class a maintainer gives each. */
const BINDINGS: { tool: string; id: string; class: SideEffectClass }[] = [
  { tool: 'echo', id: 'everything/echo', class: 'read' },
  { tool: 'get-sum', id: 'everything/get-sum', class: 'read' },
  {
    tool: 'toggle-simulated-logging',
    id: 'everything/toggle-simulated-logging',
    class: 'workspace-write',
  },
];

/**
 * Registers `@modelcontextprotocol/server-everything` as a stdio upstream of the demo tenant,
 * verifies it, binds a few of its tools (publishing their descriptors) and activates it.
 * Safe to repeat. Resolves with the bound tool versions, or [] when the package is not installed.
 */
export async function seedDemoMcp(
  g: Gateway,
  actor: string,
): Promise<{ id: string; version: string }[]> {
  let entry: string;
  try {
    entry = join(
      dirname(
        createRequire(import.meta.url).resolve(
          '@modelcontextprotocol/server-everything/package.json',
        ),
      ),
      'dist',
      'index.js',
    );
  } catch {
    return [];
  }
  const existing = (await g.mcp.list('acme')).find(
    (s) => s.name === 'everything' && s.state !== 'retired',
  );
  const server =
    existing ??
    (await g.mcp.register('acme', actor, {
      name: 'everything',
      transport: { type: 'stdio', command: process.execPath, args: [entry, 'stdio'] },
    }));
  const view = await g.mcp.get('acme', server.id);
  if (view.server.state === 'registered') await g.mcp.verify('acme', server.id, actor);
  const bound = new Set((await g.mcp.get('acme', server.id)).bindings.map((b) => b.tool));
  for (const b of BINDINGS) {
    if (bound.has(b.tool)) continue;
    const { descriptor } = await g.mcp.bind('acme', server.id, actor, {
      tool: b.tool,
      class: b.class,
      descriptor: { id: b.id, version: '1.0.0' },
    });
    await g.registry.applyEvents(
      'acme',
      [
        {
          id: `demo:${b.id}@1.0.0`,
          type: 'AssetReleasePublished',
          data: { assetId: b.id, version: '1.0.0', descriptor, inFlightPolicy: 'finish' },
        },
      ],
      actor,
    );
  }
  if ((await g.mcp.get('acme', server.id)).server.state === 'verified')
    await g.mcp.activate('acme', server.id, actor);
  return BINDINGS.map((b) => ({ id: b.id, version: '1.0.0' }));
}
