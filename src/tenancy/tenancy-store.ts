import type { Environment, LedgerEntries } from '../core/index.js';
import type { Principal } from './principal.js';

/** A tenant. */
export interface Tenant {
  id: string;
  name: string;
  createdAt: string;
}

/** A principal as stored: with the SHA-256 of its token, never the token. */
export interface StoredPrincipal extends Principal {
  tokenHash: string;
  createdAt: string;
}

/** Persistence of tenants, projects, environments and principals. */
export interface TenancyStore {
  /** Everything, for the in-memory directory. */
  loadAll(): Promise<{
    tenants: Tenant[];
    projects: { tenant: string; id: string }[];
    environments: Environment[];
    principals: StoredPrincipal[];
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
  /** Inserts a principal. @throws when its id or token hash exists. */
  addPrincipal(p: StoredPrincipal, ledger: LedgerEntries): Promise<void>;
}
