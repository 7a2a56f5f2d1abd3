import type { Environment, LedgerEntries } from '../core/index.js';
import type { StoredToken } from './access-token.js';
import type { Principal } from './principal.js';

/** A tenant. */
export interface Tenant {
  id: string;
  name: string;
  createdAt: string;
}

/** A principal as stored; its bearer tokens are stored apart ({@link StoredToken}). */
export interface StoredPrincipal extends Principal {
  createdAt: string;
}

/** Persistence of tenants, projects, environments, principals and their tokens. */
export interface TenancyStore {
  /** Everything, for the in-memory directory. */
  loadAll(): Promise<{
    tenants: Tenant[];
    projects: { tenant: string; id: string }[];
    environments: Environment[];
    principals: StoredPrincipal[];
    tokens: StoredToken[];
  }>;
  /** Inserts a tenant. @throws when it exists. */
  addTenant(t: Tenant, ledger: LedgerEntries): Promise<void>;
  /** Inserts a project. @throws when it exists. */
  addProject(
    p: { tenant: string; id: string; createdAt: string },
    ledger: LedgerEntries,
  ): Promise<void>;
  /** Inserts or replaces an environment. */
  putEnvironment(e: Environment, ledger: LedgerEntries): Promise<void>;
  /**
   * Inserts a principal with its first token, in one transaction.
   * @throws when the principal's id, or the token's id or hash, exists; then nothing is written.
   */
  addPrincipal(p: StoredPrincipal, token: StoredToken, ledger: LedgerEntries): Promise<void>;
  /**
   * Inserts or replaces tokens (by id) in one transaction: a new token, a revocation, or a
   * rotation (the old token revoked and its successor inserted together).
   * @throws when a new token's hash exists; then nothing is written.
   */
  putTokens(tokens: StoredToken[], ledger: LedgerEntries): Promise<void>;
  /**
   * Records when tokens were last used. Not audited (it is bookkeeping, written at most once a
   * minute per token); a token that no longer exists is skipped. Safe to repeat.
   */
  touchTokens(uses: { id: string; lastUsedAt: string }[]): Promise<void>;
}
