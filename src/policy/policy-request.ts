import type { Environment, SideEffectClass } from '../core/index.js';

/**
 * The Cedar actions of Gatehouse. `invoke` decides whether a call may run at all;
 * `invokeUnattended` whether it may run without a person's approval.
 */
export const PolicyAction = {
  invoke: 'invoke',
  invokeUnattended: 'invokeUnattended',
} as const;
export type PolicyAction = (typeof PolicyAction)[keyof typeof PolicyAction];

/** One question to tenant policy: may this agent call this tool with this input here? */
export interface PolicyRequest {
  tenant: string;
  project: string;
  environment: Environment;
  agent: { id: string; version: string };
  tool: { id: string; version: string; kind: string; declaredClass: SideEffectClass };
  /** The class after classification (declared class raised by rules and context). */
  effectiveClass: SideEffectClass;
  /** The call's input, after schema validation. */
  input: unknown;
  /** Defaults to `invoke`. */
  action?: PolicyAction;
}

/** Tenant policy's answer. A denial is a value, not an exception. */
export interface PolicyDecision {
  decision: 'allow' | 'deny';
  /** Ids of the policies that decided, prefixed by scope: `tenant:<id>` or `project:<id>`. */
  determiningPolicies: string[];
  /** A sentence a person can act on, naming the policies. */
  reason: string;
  /** True when the decision came from the decision cache. */
  cached: boolean;
}
