// Sandboxes' egress: one proxy endpoint per lease, allowing only the lease's allow-list.
export { EgressProxy } from './proxy.js';
export type { EgressLease, EgressLeaseOptions, EgressProxyOptions } from './proxy.js';
export type { EgressLimits } from './lease-server.js';
export type { EgressDecision } from './decision.js';
// The gateway's own egress (HTTP MCP upstreams, HTTP tools): checked, resolved once, pinned.
export { GatewayEgress } from './gateway-egress.js';
export type { GatewayEgressOptions } from './gateway-egress.js';
export { pinnedFetch } from './pinned-fetch.js';
export type {
  FetchFunction,
  PinnedAddress,
  PinnedFetch,
  PinnedFetchOptions,
} from './pinned-fetch.js';
// The rules both use: the allow-list and its DNS-safe authorization.
export { EgressAllowList } from './allow-list.js';
export type { HostVerdict } from './allow-list.js';
export { authorizeEgress, systemResolve } from './authorize.js';
export type { EgressAuthorization, EgressResolver } from './authorize.js';
export { parseConnectTarget } from './target.js';
export type { EgressTarget } from './target.js';
export { formatIp, parseIp } from './ip-address.js';
export type { IpAddress } from './ip-address.js';
