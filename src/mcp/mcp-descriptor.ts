import type { SideEffectClass } from '../core/index.js';
import type { ToolDescriptor } from '../tools/index.js';
import type { DiscoveredTool } from './mcp-binding.js';

/** What a maintainer gives to bind a discovered tool. */
export interface BindingRequest {
  tool: string;
  class: SideEffectClass;
  descriptor: { id: string; version: string };
}

/** What an `mcp` descriptor's `execution` holds. */
export interface McpExecution {
  server: string;
  tool: string;
  digest: string;
}

/**
 * The descriptor of kind `mcp` for a discovered tool: the upstream's description and schemas, the
 * maintainer's class (the upstream's annotations are untrusted and never lower it), and the
 * server, tool and digest it runs.
 */
export function mcpDescriptor(
  serverId: string,
  found: DiscoveredTool,
  as: { id: string; version: string; class: SideEffectClass },
): ToolDescriptor {
  const t = found.tool;
  const title = t.title ?? (t.annotations?.title as string | undefined);
  const execution: McpExecution = { server: serverId, tool: t.name, digest: found.digest };
  return {
    id: as.id,
    version: as.version,
    kind: 'mcp',
    ...(title ? { title } : {}),
    description:
      t.description && t.description.trim() !== '' ? t.description : `MCP tool ${t.name}`,
    inputSchema: withoutDialect(t.inputSchema),
    ...(t.outputSchema ? { outputSchema: withoutDialect(t.outputSchema) } : {}),
    sideEffect: { class: as.class },
    execution: { ...execution },
  };
}

/**
 * The schema without a `$schema` naming another dialect: MCP servers often declare draft-07, whose
 * keywords in tool schemas the gateway's 2020-12 validator reads the same way.
 */
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema, ...rest } = schema;
  if (typeof $schema === 'string' && $schema.includes('2020-12')) return schema;
  return rest;
}

/**
 * The execution config of an `mcp` descriptor.
 * @returns null when it is not `{server, tool}` strings.
 */
export function mcpExecution(d: ToolDescriptor): McpExecution | null {
  const e = d.execution;
  if (typeof e.server !== 'string' || e.server === '') return null;
  if (typeof e.tool !== 'string' || e.tool === '') return null;
  return { server: e.server, tool: e.tool, digest: typeof e.digest === 'string' ? e.digest : '' };
}

/** Warnings when the upstream's own hints say more than the maintainer's class allows for. */
export function annotationWarnings(found: DiscoveredTool, cls: SideEffectClass): string[] {
  const a = found.tool.annotations ?? {};
  const out: string[] = [];
  if (cls === 'read' && a.readOnlyHint === false)
    out.push(
      'the upstream says this tool is not read-only (readOnlyHint: false), yet it is bound as read',
    );
  if (cls === 'read' && a.destructiveHint === true)
    out.push(
      'the upstream says this tool is destructive (destructiveHint: true), yet it is bound as read',
    );
  return out;
}
