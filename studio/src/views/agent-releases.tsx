import { Empty, StatusBadge } from '../components/bits.js';
import type { AgentReleaseView, ToolVersion } from '../mcp-types.js';
import { releaseStanding } from '../tool-lifecycle.js';

/**
 * Agent releases: each version with its standing (callable, or which pinned tool versions are
 * deprecated or revoked), its max class and its closure with each tool version's state.
 */
export function AgentReleases(props: {
  releases: readonly AgentReleaseView[];
  tools: readonly ToolVersion[];
}) {
  const { releases, tools } = props;
  return (
    <section aria-labelledby="releases-title">
      <h2 id="releases-title">Agent releases</h2>
      {releases.length === 0 ? <Empty>No agent releases published.</Empty> : null}
      <ul class="cards" aria-label="Agent releases">
        {releases.map((r) => {
          const ref = `${r.agentId}@${r.version}`;
          const standing = releaseStanding(r, tools);
          return (
            <li key={ref}>
              <article class="card" aria-labelledby={`release-${ref}`}>
                <header>
                  <h3 id={`release-${ref}`}>{ref}</h3>
                  <span class={`badge badge-${standing.state}`} data-testid="release-standing">
                    {standing.label}
                  </span>
                  <span class={`class class-${r.policy.maxClass}`}>
                    max class {r.policy.maxClass}
                  </span>
                </header>
                <p class="subtle">
                  Published{' '}
                  <time dateTime={r.publishedAt}>{new Date(r.publishedAt).toLocaleString()}</time>
                </p>
                <ul aria-label={`Closure of ${ref}`}>
                  {r.closure.map((c) => {
                    const t = tools.find((x) => x.id === c.id && x.version === c.version);
                    return (
                      <li key={`${c.id}@${c.version}`}>
                        <code>
                          {c.id}@{c.version}
                        </code>{' '}
                        <StatusBadge status={t?.state ?? 'unpublished'} />
                        {t ? <span class={`class class-${t.class}`}> {t.class}</span> : null}
                      </li>
                    );
                  })}
                </ul>
              </article>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
