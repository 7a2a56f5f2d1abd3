import { describe, expect, it } from 'vitest';
import { checkAgentPermission } from '../../src/policy/index.js';

const release = {
  agentId: 'coder',
  version: '2.1.0',
  closure: [
    { id: 'git.push', version: '1.2.0' },
    { id: 'fs.read', version: '1.0.0' },
    { id: 'fs.read', version: '1.1.0' },
  ],
};

describe('checkAgentPermission', () => {
  it('allows a tool version in the release closure', () => {
    expect(checkAgentPermission(release, { id: 'git.push', version: '1.2.0' })).toEqual({
      allowed: true,
    });
    expect(checkAgentPermission(release, { id: 'fs.read', version: '1.1.0' })).toEqual({
      allowed: true,
    });
  });

  it('says when the tool is not in the closure at all', () => {
    expect(checkAgentPermission(release, { id: 'db.drop', version: '1.0.0' })).toEqual({
      allowed: false,
      reason:
        'Agent coder@2.1.0 may not call db.drop: the tool is not in its release closure. Publish an agent release whose closure includes db.drop@1.0.0.',
    });
  });

  it('names the pinned versions when another version is asked for', () => {
    const r = checkAgentPermission(release, { id: 'fs.read', version: '2.0.0' });
    expect(r).toEqual({
      allowed: false,
      reason:
        'Agent coder@2.1.0 may not call fs.read@2.0.0: its release closure pins fs.read@1.0.0, fs.read@1.1.0. Call that version, or publish an agent release that pins fs.read@2.0.0.',
    });
  });

  it('does not mix up ids and versions', () => {
    const tricky = { agentId: 'a', version: '1', closure: [{ id: 'x@1', version: '2' }] };
    expect(checkAgentPermission(tricky, { id: 'x', version: '1@2' }).allowed).toBe(false);
  });
});
