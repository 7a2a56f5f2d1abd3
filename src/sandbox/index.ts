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
export { SANDBOX_UID, Workspaces } from './workspaces.js';
export type { Workspace } from './workspaces.js';
