/** The REST API, same origin, authenticated by the session cookie; writes carry the CSRF token. */
import { serverClock } from './server-clock.js';

/** An error answered by the gateway (`{"error": {code, message, details}}`) or the network. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';

/** Remembers the session's CSRF token, sent with every write. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when the gateway says the session is gone (401), so the app shows sign-in. */
let onSignedOut: () => void = () => undefined;

/** Sets what happens when a request finds the session expired or revoked. */
export function whenSignedOut(f: () => void): void {
  onSignedOut = f;
}

/**
 * One request to the API. JSON in, JSON out.
 * @throws ApiError with the gateway's code and message on any non-2xx answer.
 */
export async function api<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const h: Record<string, string> = { accept: 'application/json', ...headers };
  if (method !== 'GET') h['x-csrf-token'] = csrfToken;
  if (body !== undefined) h['content-type'] = 'application/json';
  let res: Response;
  const sent = Date.now();
  try {
    res = await fetch(path, {
      method,
      headers: h,
      credentials: 'same-origin',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The gateway cannot be reached. Is it running?');
  }
  serverClock.observe(res.headers.get('date'), sent, Date.now());
  const text = await res.text();
  const parsed: unknown = text === '' ? undefined : JSON.parse(text);
  if (!res.ok) {
    const e = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    if (res.status === 401 && !path.startsWith('/v1/sessions')) onSignedOut();
    throw new ApiError(
      res.status,
      e?.code ?? 'HTTP',
      e?.message ?? `${res.status} ${res.statusText}`,
    );
  }
  return parsed as T;
}

/** The text of any thrown value, for an error message on screen. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
