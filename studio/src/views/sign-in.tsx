import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api.js';
import { ErrorNote } from '../components/bits.js';
import { signIn } from '../session.js';
import type { SignedIn } from '../session.js';

/**
 * Sign-in: a person's bearer token, exchanged once for a session cookie. The build prerenders it
 * into the page, so the field can be typed in before this code runs: what was typed by then is
 * taken over when it does. Until then the button is disabled, which also stops the form from being
 * submitted natively (and it would be a POST, never putting the token in a URL).
 */
export function SignIn({ onSignedIn }: { onSignedIn: (s: SignedIn) => void }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const field = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    const typed = field.current?.value ?? '';
    if (typed !== '') setToken(typed);
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(token));
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Gatehouse Studio</h1>
      <p>Sign in with your token (reviewers, operators, maintainers and admins).</p>
      <form method="post" onSubmit={(e) => void submit(e)}>
        <label for="token">Token</label>
        <input
          ref={field}
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy || token.trim() === ''} aria-busy={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorNote message={error} />
    </main>
  );
}
