import type { Environment, SideEffectClass } from '../../src/core/index.js';
import type { PolicyRequest } from '../../src/policy/index.js';

/** A development environment `dev` of project `web` of tenant `acme`. */
export const devEnvironment: Environment = {
  tenant: 'acme',
  project: 'web',
  name: 'dev',
  class: 'development',
  frozen: false,
};

/** A policy request with sensible defaults; `over` replaces any part. */
export function policyRequest(over: Partial<PolicyRequest> = {}): PolicyRequest {
  const effectiveClass: SideEffectClass = over.effectiveClass ?? 'read';
  return {
    tenant: 'acme',
    project: 'web',
    environment: devEnvironment,
    agent: { id: 'coder', version: '1.0.0' },
    tool: { id: 'git.push', version: '1.2.0', kind: 'shell', declaredClass: effectiveClass },
    effectiveClass,
    input: {},
    ...over,
  };
}
