import { canonicalDigest } from './canonical-json.js';

/** Everything a request hash covers (DESIGN §8). */
export interface RequestHashInput {
  tenant: string;
  project: string;
  environment: string;
  agent: { id: string; version: string };
  tool: { id: string; version: string };
  /** The input as given, after schema validation, without defaults filled in. */
  input: unknown;
}

/**
 * The request hash of DESIGN §8: lowercase hex SHA-256 of the JCS bytes of exactly
 * `{agent:{id,version}, environment, input, project, tenant, tool:{id,version}}`.
 * Approvals bind to it; anyone can recompute it from a receipt.
 */
export function requestHash(r: RequestHashInput): string {
  return canonicalDigest({
    agent: { id: r.agent.id, version: r.agent.version },
    environment: r.environment,
    input: r.input,
    project: r.project,
    tenant: r.tenant,
    tool: { id: r.tool.id, version: r.tool.version },
  });
}
