export { BwrapSandbox } from './bwrap-sandbox.js';
export type { ConfinedCommand, ConfinedSpec } from './confined-command.js';
export type { BwrapSandboxOptions, BareCommand } from './bwrap-sandbox.js';
export { SandboxKill } from './sandbox.js';
export type { Sandbox, SandboxFile, SandboxLimits, SandboxResult, SandboxSpec } from './sandbox.js';
export type { HostUser } from './cgroups.js';
export {
  DEFAULT_PATH,
  EGRESS_PROXY_URL,
  EGRESS_SOCKET,
  SANDBOX_ID_INSIDE,
  WORKSPACE,
} from './bwrap-args.js';
export { DEFAULT_CGROUP_PARENT } from './detect-cgroups.js';
// Egress proxy and workspaces (written alongside; exported here so other parts reach them).
export { EgressProxy } from './egress-proxy.js';
export type {
  EgressDecision,
  EgressLease,
  EgressLeaseOptions,
  EgressLimits,
  EgressProxyOptions,
  EgressResolver,
} from './egress-proxy.js';
export { SANDBOX_UID, Workspaces } from './workspaces.js';
export type { Workspace } from './workspaces.js';
// The allow-list and its DNS-safe authorization, for egress made by the gateway itself (HTTP MCP upstreams).
export { EgressAllowList } from './egress-allow-list.js';
export type { HostVerdict } from './egress-allow-list.js';
export { authorizeEgress, systemResolve } from './egress-authorize.js';
export type { EgressAuthorization } from './egress-authorize.js';
export { parseConnectTarget } from './egress-target.js';
export type { EgressTarget } from './egress-target.js';
export { formatIp } from './egress-address.js';
export type { IpAddress } from './egress-address.js';
