import type { Client } from '@modelcontextprotocol/client';
import { jsonValueProblem } from '../../core/index.js';
import { toolDigest, upstreamTool } from '../tool-digest.js';
import type { DiscoveredTool } from '../mcp-binding.js';

/** What discovery lists: tools with digests, resources and prompts. */
export interface DiscoveredLists {
  tools: DiscoveredTool[];
  resources: { uri: string; name: string }[];
  prompts: { name: string; description?: string }[];
}

/** The server's tools with their digests, fetched fresh. @throws Error on failure. */
export async function listDiscoveredTools(
  client: Client,
  timeoutMs: number,
): Promise<DiscoveredTool[]> {
  const { tools } = await client.listTools(undefined, {
    timeout: timeoutMs,
    cacheMode: 'refresh',
  });
  return tools.map((t) => {
    // Digests are of canonical JSON: a tool it cannot hold is refused here, saying where.
    const problem = jsonValueProblem(t);
    if (problem)
      throw new Error(
        `the upstream lists tool ${JSON.stringify(String(t.name).slice(0, 100))}, which cannot be kept as JSON at ${problem.pointer}: ${problem.reason}`,
      );
    const tool = upstreamTool(t);
    return { tool, digest: toolDigest(tool) };
  });
}

/**
 * Tools, resources (and templates) and prompts of a connected server; resources and prompts only
 * when it declared those capabilities. @throws Error on failure.
 */
export async function discoverLists(client: Client, timeoutMs: number): Promise<DiscoveredLists> {
  const tools = await listDiscoveredTools(client, timeoutMs);
  const caps = client.getServerCapabilities() ?? {};
  const resources: DiscoveredLists['resources'] = [];
  if (caps.resources) {
    const r = await client.listResources(undefined, { timeout: timeoutMs });
    resources.push(...r.resources.map((x) => ({ uri: x.uri, name: x.name })));
    const t = await client.listResourceTemplates(undefined, { timeout: timeoutMs });
    resources.push(...t.resourceTemplates.map((x) => ({ uri: x.uriTemplate, name: x.name })));
  }
  const prompts: DiscoveredLists['prompts'] = [];
  if (caps.prompts) {
    const p = await client.listPrompts(undefined, { timeout: timeoutMs });
    prompts.push(
      ...p.prompts.map((x) =>
        x.description === undefined
          ? { name: x.name }
          : { name: x.name, description: x.description },
      ),
    );
  }
  return { tools, resources, prompts };
}
