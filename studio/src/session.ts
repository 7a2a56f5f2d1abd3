import { api, setCsrfToken } from './api.js';

/** Who is signed in (the answer of `/v1/sessions`). */
export interface SignedIn {
  principal: { id: string; name: string; tenant: string; roles: string[] };
  expiresAt: string;
  csrfToken: string;
}

/** The current session, or null when not signed in. */
export async function currentSession(): Promise<SignedIn | null> {
  try {
    const s = await api<SignedIn>('GET', '/v1/sessions/current');
    setCsrfToken(s.csrfToken);
    return s;
  } catch {
    return null;
  }
}

/**
 * Exchanges a bearer token for a session cookie. The token travels once, in a header, never in a
 * URL, and is not kept by the page.
 */
export async function signIn(token: string): Promise<SignedIn> {
  const s = await api<SignedIn>('POST', '/v1/sessions', undefined, {
    authorization: `Bearer ${token.trim()}`,
  });
  setCsrfToken(s.csrfToken);
  return s;
}

/** Revokes the session and clears its cookie. */
export async function signOut(): Promise<void> {
  await api<undefined>('DELETE', '/v1/sessions/current');
  setCsrfToken('');
}

/** True when the signed-in person holds one of `roles`. */
export function holds(s: SignedIn, ...roles: string[]): boolean {
  return s.principal.roles.some((r) => roles.includes(r));
}
