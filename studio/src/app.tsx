import { LocationProvider, Route, Router } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { whenSignedOut } from './api.js';
import { Busy } from './components/bits.js';
import { Layout } from './layout.js';
import { startLive, stopLive } from './live.js';
import { RolesContext } from './roles.js';
import { currentSession } from './session.js';
import type { SignedIn } from './session.js';
import { ApprovalsView } from './views/approvals.js';
import { AuditView } from './views/audit.js';
import { InvocationView } from './views/invocation.js';
import { InvocationsView } from './views/invocations.js';
import { McpServerView } from './views/mcp-server.js';
import { McpServersView } from './views/mcp-servers.js';
import { NotFound } from './views/not-found.js';
import { SignIn } from './views/sign-in.js';
import { ToolsView } from './views/tools.js';
import { UncertainView } from './views/uncertain.js';

/** The Studio: sign-in until there is a session, then the views. */
export function App() {
  const [session, setSession] = useState<SignedIn | null | undefined>(undefined);
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    void currentSession().then(setSession);
  }, []);
  useEffect(() => {
    if (session) startLive();
    else stopLive();
  }, [session]);
  if (session === undefined) return <Busy label="Loading the Studio…" />;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  return (
    <RolesContext.Provider value={session.principal.roles}>
      <LocationProvider scope="/studio">
        <Layout session={session} onSignedOut={() => setSession(null)}>
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
