import { describe, expect, it } from 'vitest';
import { MemoryPolicyStore } from '../../src/policy/index.js';
import { policyStoreContract } from '../contracts/policy-store.contract.js';

policyStoreContract('MemoryPolicyStore', () =>
  Promise.resolve({ store: new MemoryPolicyStore(), close: () => Promise.resolve() }),
);

describe('MemoryPolicyStore', () => {
  it('keeps the audit draft of each put, and none of a refused one', async () => {
    const store = new MemoryPolicyStore();
    const p = { tenant: 'acme', project: null, text: '', version: 1, updatedAt: 'now' };
    const draft = {
      tenant: 'acme',
      type: 'policy.replaced',
      subject: 'policy/acme',
      at: 'now',
      actor: 'a',
      data: {},
    };
    await store.put(p, draft);
    await expect(store.put(p, draft)).rejects.toThrow(/version 1 cannot follow/);
    expect(store.audit).toEqual([draft]);
  });
});
