import { ApiError, messageOf } from '../api.js';

/**
 * The gateway's refusal of an action, as a person reads it: who refused, the code and the
 * gateway's own message (which says what to do).
 */
export function refusal(e: unknown): string {
  if (e instanceof ApiError && e.status !== 0)
    return `The gateway refused (${e.status} ${e.code}): ${e.message}`;
  return messageOf(e);
}
