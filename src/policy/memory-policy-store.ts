import { ErrorCode, GatehouseError } from '../core/index.js';
import type { AuditRecordDraft } from '../core/index.js';
import type { PolicyStore, StoredPolicy } from './policy-store.js';

/** A {@link PolicyStore} in memory, for unit tests of logic. Keeps the audit drafts it was given. */
export class MemoryPolicyStore implements PolicyStore {
  private readonly policies = new Map<string, StoredPolicy>();
  /** The audit drafts written with each put, oldest first. */
  readonly audit: AuditRecordDraft[] = [];

  get(tenant: string, project: string | null): Promise<StoredPolicy | undefined> {
    const p = this.policies.get(key(tenant, project));
    return Promise.resolve(p && { ...p });
  }

  put(p: StoredPolicy, audit: AuditRecordDraft): Promise<void> {
    const current = this.policies.get(key(p.tenant, p.project))?.version ?? 0;
    if (p.version !== current + 1) {
      return Promise.reject(
        new GatehouseError(
          ErrorCode.CONFLICT,
          `The policy of ${scopeName(p)} is at version ${current}; version ${p.version} cannot follow it. Read it again and retry.`,
          { details: { currentVersion: current } },
        ),
      );
    }
    this.policies.set(key(p.tenant, p.project), { ...p });
    this.audit.push(structuredClone(audit));
    return Promise.resolve();
  }

  list(): Promise<StoredPolicy[]> {
    return Promise.resolve([...this.policies.values()].map((p) => ({ ...p })));
  }
}

function key(tenant: string, project: string | null): string {
  return JSON.stringify([tenant, project]);
}

function scopeName(p: { tenant: string; project: string | null }): string {
  return p.project === null ? `tenant ${p.tenant}` : `project ${p.project} of tenant ${p.tenant}`;
}
