import { useState } from 'preact/hooks';
import { messageOf } from '../api.js';
import { ErrorNote } from '../components/bits.js';
import { signIn } from '../session.js';
import type { SignedIn } from '../session.js';

/** Sign-in: a person's bearer token, exchanged once for a session cookie. */
export function SignIn({ onSignedIn }: { onSignedIn: (s: SignedIn) => void }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
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
      <form onSubmit={(e) => void submit(e)}>
        <label for="token">Token</label>
        <input
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
