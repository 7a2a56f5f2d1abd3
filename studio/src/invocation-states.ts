/**
 * The invocation states the Studio knows (DESIGN §9), in the order its filter lists them. A copy of
 * the server's (src/invocation imports Node modules); test/studio/studio-constants.test.ts checks
 * it against `InvocationStatus`.
 */
export const INVOCATION_STATUSES = [
  'denied',
  'awaiting_approval',
  'queued',
  'running',
  'failed',
  'uncertain',
  'observed',
] as const;

/** The states whose outcome is decided, so the invocation has a receipt (the server's `hasOutcome`). */
export const DECIDED_STATUSES: readonly string[] = ['denied', 'failed', 'uncertain', 'observed'];
