export { Role, ROLES, hasRole } from './principal.js';
export type { Principal } from './principal.js';
export { Directory } from './directory.js';
export type { DirectoryOptions, NewPrincipal } from './directory.js';
export type { TenancyStore, Tenant, StoredPrincipal } from './tenancy-store.js';
export { SessionBook } from './session-book.js';
export type { Session, OpenedSession, SessionBookOptions } from './session-book.js';
