export { GATEHOUSE_CEDAR_SCHEMA } from './cedar-schema.js';
export { CedarEngine } from './cedar-engine.js';
export type {
  PolicyValidation,
  PolicyValidationError,
  PreparedPolicySet,
  AuthorizationResult,
  PolicySources,
} from './cedar-engine.js';
export { PolicyAction } from './policy-request.js';
export type { PolicyRequest, PolicyDecision } from './policy-request.js';
export { TenantPolicy } from './tenant-policy.js';
export type { TenantPolicyOptions, PolicyText, PolicyReplacement } from './tenant-policy.js';
export { defaultTenantPolicy } from './default-tenant-policy.js';
export type { PolicyStore, StoredPolicy } from './policy-store.js';
export { MemoryPolicyStore } from './memory-policy-store.js';
export { classifySideEffect } from './classify-side-effect.js';
export type { SideEffectClassification } from './classify-side-effect.js';
export { checkAgentPermission } from './agent-permission.js';
export type { AgentPermission, ReleaseClosure } from './agent-permission.js';
