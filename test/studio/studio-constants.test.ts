import { describe, expect, it } from 'vitest';
import { ACCESS } from '../../src/http/index.js';
import { hasOutcome, InvocationStatus } from '../../src/invocation/index.js';
import { ROUTE_ROLES } from '../../studio/src/access.js';
import { DECIDED_STATUSES, INVOCATION_STATUSES } from '../../studio/src/invocation-states.js';
import { TOOL_STATE_MEANING, TOOL_STATES } from '../../studio/src/tool-lifecycle.js';
import { DescriptorState } from '../../src/tools/index.js';

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

describe("the Studio's copy of who may call the routes its buttons use is the server's", () => {
  it('every route it names, with exactly the roles the access table allows', () => {
    for (const [route, roles] of Object.entries(ROUTE_ROLES)) {
      const access = ACCESS[route as keyof typeof ACCESS];
      expect(access, route).toBeDefined();
      const allowed = access.roles === 'public' ? [] : Object.keys(access.roles);
      // Agents never sign in to the Studio, so the Studio's copy leaves them out.
      expect([...roles].sort(), route).toEqual(allowed.filter((r) => r !== 'agent').sort());
    }
  });
});

describe("the Studio's tool lifecycle states are the server's", () => {
  it('every state of a tool version, each with what it means', () => {
    expect([...TOOL_STATES]).toEqual(Object.values(DescriptorState));
    expect(Object.keys(TOOL_STATE_MEANING).sort()).toEqual([...TOOL_STATES].sort());
  });
});
