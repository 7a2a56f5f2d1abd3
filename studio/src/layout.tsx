import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { may } from './access.js';
import { api, messageOf } from './api.js';
import { ErrorNote } from './components/bits.js';
import { stopLive, useLiveState } from './live.js';
import { holds, signOut } from './session.js';
import type { SignedIn } from './session.js';
import { useResource } from './use-resource.js';

const COUNT_EVENTS = [
  'ApprovalRequested',
  'ApprovalDecided',
  'ToolEffectUncertain',
  'ToolEffectResolved',
];

/** The frame of every view: navigation with live counts, the stream's state, who is signed in. */
export function Layout(props: {
  session: SignedIn;
  onSignedOut: () => void;
  children: ComponentChildren;
}) {
  const { session } = props;
  const { path } = useLocation();
  const live = useLiveState();
  const [error, setError] = useState<string | null>(null);
  const reviews = holds(session, 'reviewer', 'operator', 'admin');
  const operates = holds(session, 'operator');
  const pending = useResource(
    async () =>
      reviews
        ? (await api<{ approvals: unknown[] }>('GET', '/v1/approvals?status=pending')).approvals
            .length
        : 0,
    [reviews],
    COUNT_EVENTS,
  );
  const uncertain = useResource(
    async () =>
      operates
        ? (await api<{ invocations: unknown[] }>('GET', '/v1/uncertain')).invocations.length
        : 0,
    [operates],
    COUNT_EVENTS,
  );
  const link = (href: string, label: string, count?: number) => {
    const current =
      path === href ||
      path.startsWith(`${href}/`) ||
      (href === '/studio/approvals' && path === '/studio');
    return (
      <li>
        <a href={href} aria-current={current ? 'page' : undefined}>
          {label}
          {count !== undefined && count > 0 ? (
            <span class="count" aria-label={`, ${count} waiting`}>
              {count}
            </span>
          ) : null}
        </a>
      </li>
    );
  };
  const out = async () => {
    try {
      await signOut();
      stopLive();
      props.onSignedOut();
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Gatehouse Studio</span>
        <nav aria-label="Views">
          <ul>
            {reviews ? link('/studio/approvals', 'Approvals', pending.value) : null}
            {operates ? link('/studio/uncertain', 'Uncertain', uncertain.value) : null}
            {link('/studio/invocations', 'Invocations')}
            {may(session.principal.roles, 'GET /v1/mcp-servers')
              ? link('/studio/mcp', 'MCP servers')
              : null}
            {link('/studio/tools', 'Tools & releases')}
            {link('/studio/audit', 'Audit')}
          </ul>
        </nav>
        <span class={`live live-${live}`} role="status">
          {live === 'live' ? 'Live' : live === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
        </span>
        <span class="who">
          {session.principal.name} <small>({session.principal.roles.join(', ')})</small>
        </span>
        <button type="button" class="quiet" onClick={() => void out()}>
          Sign out
        </button>
      </header>
      <ErrorNote message={error} />
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
