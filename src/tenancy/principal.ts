/** Roles of DESIGN §6. */
export const Role = {
  agent: 'agent',
  reviewer: 'reviewer',
  operator: 'operator',
  maintainer: 'maintainer',
  admin: 'admin',
} as const;
export type Role = (typeof Role)[keyof typeof Role];

/** Every role, for validation and listings. */
export const ROLES: readonly Role[] = ['agent', 'reviewer', 'operator', 'maintainer', 'admin'];

/** Someone who calls Gatehouse with a bearer token. */
export interface Principal {
  id: string;
  tenant: string;
  name: string;
  roles: Role[];
  /** For agents: the project they work in. */
  project: string | null;
  /** For agents: the agent release they run as. */
  agent: { id: string; version: string } | null;
}

/** True when the principal holds `role`. */
export function hasRole(p: Principal, role: Role): boolean {
  return p.roles.includes(role);
}
