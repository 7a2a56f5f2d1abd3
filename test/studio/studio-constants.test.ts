import { describe, expect, it } from 'vitest';
import { hasOutcome, InvocationStatus } from '../../src/invocation/index.js';
import { DECIDED_STATUSES, INVOCATION_STATUSES } from '../../studio/src/invocation-states.js';

/**
 * The Studio keeps its own list of invocation states (the server's module imports Node code it
 * cannot bundle): these fail when a state is added, renamed or removed on one side only.
 */
describe("the Studio's invocation states are the server's", () => {
  it('every state, in the order the filter lists them', () => {
    expect([...INVOCATION_STATUSES]).toEqual(Object.values(InvocationStatus));
  });

  it('the decided states: those with an outcome and a receipt', () => {
    const decided = Object.values(InvocationStatus).filter((s) => hasOutcome(s));
    expect([...DECIDED_STATUSES].sort()).toEqual(decided.sort());
    expect(decided.length).toBeGreaterThan(0);
  });
});
