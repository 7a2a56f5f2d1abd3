import type { AgentReleaseView, ToolVersion } from './mcp-types.js';

/** The lifecycle states of a tool version, in order (a copy of the server's; test/studio checks it). */
export const TOOL_STATES = ['active', 'deprecated', 'revoked'] as const;

/** What each lifecycle state of a tool version means for the calls made to it (DESIGN §2). */
export const TOOL_STATE_MEANING: Record<ToolVersion['state'], string> = {
  active: 'callable by the releases that pin it',
  deprecated: 'releases that pin it still call it, with a warning; no new release may pin it',
  revoked: 'no new calls: every call to it is refused',
};

/** Where an agent release stands, from the states of the tool versions its closure pins. */
export interface ReleaseStanding {
  /** `callable`, `deprecated` (callable with warnings) or `revoked` (some calls are refused). */
  state: 'callable' | 'deprecated' | 'revoked';
  /** The standing in words, e.g. `callable; 1 of 3 tools deprecated`. */
  label: string;
}

/**
 * An agent release's standing: `revoked` when a pinned version is revoked or not published (its
 * calls are refused), `deprecated` when one is deprecated (its calls warn), else `callable`.
 */
export function releaseStanding(
  r: AgentReleaseView,
  tools: readonly ToolVersion[],
): ReleaseStanding {
  const stateOf = (c: { id: string; version: string }) =>
    tools.find((t) => t.id === c.id && t.version === c.version)?.state ?? 'revoked';
  const count = (s: ToolVersion['state']) => r.closure.filter((c) => stateOf(c) === s).length;
  const of = r.closure.length;
  const revoked = count('revoked');
  const deprecated = count('deprecated');
  if (revoked > 0)
    return {
      state: 'revoked',
      label: `${revoked} of ${of} tools revoked: their calls are refused${deprecated > 0 ? `; ${deprecated} deprecated` : ''}`,
    };
  if (deprecated > 0)
    return { state: 'deprecated', label: `callable; ${deprecated} of ${of} tools deprecated` };
  return { state: 'callable', label: 'callable' };
}
