import { transition } from '../core/index.js';
import type { Transitions } from '../core/index.js';

/** Lifecycle of a descriptor version (DESIGN §2). */
export const DescriptorState = {
  active: 'active',
  deprecated: 'deprecated',
  revoked: 'revoked',
} as const;
export type DescriptorState = (typeof DescriptorState)[keyof typeof DescriptorState];

const transitions: Transitions<DescriptorState> = {
  active: ['deprecated', 'revoked'],
  deprecated: ['revoked'],
  revoked: [],
};

/** True when a descriptor may move from `from` to `to`. */
export function canTransitionDescriptor(from: DescriptorState, to: DescriptorState): boolean {
  return transitions[from].includes(to);
}

/**
 * The descriptor state after moving from `from` to `to`.
 * @throws IllegalStateError when the move is not in the table (a bug: callers check first).
 */
export function transitionDescriptor(from: DescriptorState, to: DescriptorState): DescriptorState {
  return transition('descriptor', transitions, from, to);
}
