// Sandboxes' egress: one proxy endpoint per lease, allowing only the lease's allow-list.
export {
  EgressProxy,
  type EgressLease,
  type EgressLeaseOptions,
  type EgressProxyOptions,
} from './proxy.js';
export type { EgressLimits } from './lease-server.js';
export { EGRESS_ANSWER_HEADER } from './forward.js';
export type { EgressDecision } from './decision.js';
export { compressedAnswer } from './response-scrub.js';
// The gateway's own egress (HTTP MCP upstreams, HTTP tools): checked, resolved once, pinned.
export {
  GatewayEgress,
  type GatewayEgressOpening,
  type GatewayEgressOptions,
} from './gateway-egress.js';
export {
  pinnedFetch,
  PinnedFetchError,
  type FetchFunction,
  type PinnedAddress,
  type PinnedFetch,
  type PinnedFetchOptions,
} from './pinned-fetch.js';
// The rules both use: the allow-list and its DNS-safe authorization.
export { EgressAllowList, type HostVerdict } from './allow-list.js';
export {
  authorizeEgress,
  systemResolve,
  type EgressAuthorization,
  type EgressResolver,
} from './authorize.js';
export { parseConnectTarget, type EgressTarget } from './target.js';
export { formatIp, parseIp, type IpAddress } from './ip-address.js';
// Documents a client downloads (an OpenAPI document by URL): public addresses only, pinned.
export {
  authorizeDocumentFetch,
  type DocumentFetchAuthorization,
  type DocumentFetchOptions,
} from './document-fetch.js';
