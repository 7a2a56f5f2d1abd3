import { LocationProvider, Route, Router } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { Layout } from './layout.js';
import { startLive, stopLive } from './live.js';
import { RolesContext } from './roles.js';
import type { SignedIn } from './session.js';
import { ApprovalsView } from './views/approvals.js';
import { AuditView } from './views/audit.js';
import { InvocationView } from './views/invocation.js';
import { InvocationsView } from './views/invocations.js';
import { McpServerView } from './views/mcp-server.js';
import { McpServersView } from './views/mcp-servers.js';
import { NotFound } from './views/not-found.js';
import { ToolsView } from './views/tools.js';
import { UncertainView } from './views/uncertain.js';

/**
 * The views of a signed-in person, with the live event stream. A chunk of its own, loaded once
 * the sign-in page shows (or at once with a session), so the sign-in page waits for none of it.
 */
export function SignedInApp(props: { session: SignedIn; onSignedOut: () => void }) {
  const { session } = props;
  useEffect(() => {
    startLive();
    return () => stopLive();
  }, [session]);
  return (
    <RolesContext.Provider value={session.principal.roles}>
      <LocationProvider scope="/studio">
        <Layout session={session} onSignedOut={props.onSignedOut}>
          <Router>
            <Route path="/studio" component={ApprovalsView} />
            <Route path="/studio/approvals" component={ApprovalsView} />
            <Route path="/studio/uncertain" component={UncertainView} />
            <Route path="/studio/invocations" component={InvocationsView} />
            <Route path="/studio/invocations/:id" component={InvocationView} />
            <Route path="/studio/mcp" component={McpServersView} />
            <Route path="/studio/mcp/:id" component={McpServerView} />
            <Route path="/studio/tools" component={ToolsView} />
            <Route path="/studio/audit" component={AuditView} />
            <Route default component={NotFound} />
          </Router>
        </Layout>
      </LocationProvider>
    </RolesContext.Provider>
  );
}
