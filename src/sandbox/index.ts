export { BwrapSandbox } from './bwrap/bwrap-sandbox.js';
export type { ConfinedCommand, ConfinedSpec } from './bwrap/confined-command.js';
export type { BwrapSandboxOptions, BareCommand } from './bwrap/bwrap-sandbox.js';
export type { WarmPool, WarmPoolSettings, WarmSandbox } from './spawner/warm-pool.js';
export { SandboxKill } from './sandbox.js';
export type { Sandbox, SandboxFile, SandboxLimits, SandboxResult, SandboxSpec } from './sandbox.js';
export type { HostUser } from './cgroups/cgroups.js';
export {
  DEFAULT_PATH,
  EGRESS_PROXY_URL,
  EGRESS_SOCKET,
  SANDBOX_ID_INSIDE,
  WORKSPACE,
} from './bwrap/bwrap-args.js';
export { DEFAULT_CGROUP_PARENT } from './cgroups/detect-cgroups.js';
export { SANDBOX_UID, Workspaces } from './workspaces.js';
export type { Workspace } from './workspaces.js';
export { mountTmpfs, openScratch, unmountAll } from './host-tmpfs.js';
export type { HostCommandRunner, ScratchDir } from './host-tmpfs.js';
export { EgressRelay, type RefusedBetweenCalls } from './egress-relay.js';
export { LeaseKeeper, type KeeperOps } from './lease-keeper.js';
export { closeInheritedDescriptors } from './spawner/inherited-descriptors.js';
