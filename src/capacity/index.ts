export { LeaseStatus, transitionLease } from './lease.js';
export type { Lease, LeaseResources } from './lease.js';
export type { LeaseStore } from './lease-store.js';
export { ExecutionCapacity } from './execution-capacity.js';
export type { PoolConfig, LeaseRequest, AcquireOptions } from './execution-capacity.js';
export { Reaper } from './reaper.js';
export type { ReaperOptions } from './reaper.js';
export type { LeaseQuotas, QuotaBreach, LeaseOwner } from './lease-quotas.js';
