export { Role, ROLES, hasRole } from './principal.js';
export type { Principal } from './principal.js';
export { Directory } from './directory.js';
export type { DirectoryOptions, FirstToken, NewPrincipal } from './directory.js';
export type { TenancyStore, Tenant, StoredPrincipal } from './tenancy-store.js';
export { SessionBook } from './session-book.js';
export type { Session, OpenedSession, SessionBookOptions, SessionToken } from './session-book.js';
export { TokenStatus, tokenEnd, tokenStatus } from './access-token.js';
export type { StoredToken, TokenInfo } from './access-token.js';
export { AccessTokens } from './access-tokens.js';
export type { Authentication, NewToken, TokenOwner } from './access-tokens.js';
export {
  DEFAULT_TOKEN_TTL_MS,
  MAX_TOKEN_TTL_MS,
  MIN_TOKEN_TTL_MS,
  parseDuration,
  tokenExpiry,
} from './token-ttl.js';
export { TokenWatch } from './token-watch.js';
export type { McpSessionStore, StoredMcpSession } from './mcp-session-store.js';
export { DEFAULT_MCP_STREAM_LIMITS } from './mcp-stream-event-store.js';
export type {
  McpStreamEvent,
  McpStreamEventStore,
  McpStreamLimits,
} from './mcp-stream-event-store.js';
