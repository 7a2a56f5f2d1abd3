import { useEffect, useState } from 'preact/hooks';
import { whenSignedOut } from './api.js';
import { Busy } from './components/bits.js';
import type { SignedIn } from './session.js';
import type * as ViewsModule from './signed-in.js';
import { SignIn } from './views/sign-in.js';

type Views = typeof ViewsModule;
let views: Promise<Views> | undefined;
/** The signed-in views' chunk, fetched once. */
const loadViews = (): Promise<Views> => (views ??= import('./signed-in.js'));

/**
 * The Studio: sign-in until there is a session, then the views. `props.session` is the answer of
 * the session check, started before the first render, or null when the gateway already knew there
 * is no session (it sent the sign-in page's markup, which this then hydrates). The sign-in page
 * needs only this module's code; the views' chunk is fetched while it shows.
 */
export function App(props: { session: Promise<SignedIn | null> | null }) {
  const [session, setSession] = useState<SignedIn | null | undefined>(
    props.session === null ? null : undefined,
  );
  const [loaded, setLoaded] = useState<Views | undefined>(undefined);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    whenSignedOut(() => setSession(null));
    void props.session?.then(setSession);
  }, [props.session]);
  useEffect(() => {
    if (session === undefined || loaded) return;
    loadViews().then(setLoaded, () => setFailed(true));
  }, [session, loaded]);
  if (session === undefined) return <Busy label="Loading the Studio…" />;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  if (failed)
    return (
      <p class="error" role="alert">
        The Studio could not load its views; reload the page.
      </p>
    );
  if (!loaded) return <Busy label="Loading the Studio…" />;
  return <loaded.SignedInApp session={session} onSignedOut={() => setSession(null)} />;
}
