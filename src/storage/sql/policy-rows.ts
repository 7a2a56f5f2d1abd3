import { ErrorCode, GatehouseError } from '../../core/index.js';
import type { StoredPolicy } from '../../policy/index.js';
import type { Tables } from '../schema/tables.js';

/** The project under which the tenant-wide policy is stored, so (tenant, project) is the key. */
export const TENANT_SCOPE = '';

/** A policy from its row. */
export function toPolicy(r: Tables['policies']): StoredPolicy {
  return {
    tenant: r.tenant,
    project: r.project === TENANT_SCOPE ? null : r.project,
    text: r.text,
    version: Number(r.version),
    updatedAt: r.updated_at,
  };
}

/** The row of a policy. */
export function policyRow(p: StoredPolicy): Tables['policies'] {
  return {
    tenant: p.tenant,
    project: p.project ?? TENANT_SCOPE,
    text: p.text,
    version: p.version,
    updated_at: p.updatedAt,
  };
}

/**
 * Checks that `p` is the next version of its scope, whose stored version is `current` (0 for
 * none).
 * @throws GatehouseError CONFLICT otherwise, naming the current version.
 */
export function checkNextPolicyVersion(p: StoredPolicy, current: number): void {
  if (p.version === current + 1) return;
  const scope =
    p.project === null ? `tenant ${p.tenant}` : `project ${p.project} of tenant ${p.tenant}`;
  throw new GatehouseError(
    ErrorCode.CONFLICT,
    `The policy of ${scope} is at version ${current}; version ${p.version} cannot follow it. Read it again and retry.`,
    { details: { currentVersion: current } },
  );
}
