import { ErrorCode, GatehouseError, isGatehouseError } from '../core/index.js';

/** The `details.reason` of {@link keyTaken}. */
const KEY_TAKEN = 'key-taken';

/**
 * What {@link InvocationStore.save} throws when another process stored an invocation of the same
 * tenant, principal, idempotency key and attempt first (nodes sharing one database): nothing of
 * this step is stored, and the caller answers with the stored call instead.
 */
export function keyTaken(key: string, cause?: unknown): GatehouseError {
  return new GatehouseError(
    ErrorCode.CONFLICT,
    `Another gateway node recorded a call with idempotency key ${key} first.`,
    { details: { reason: KEY_TAKEN }, cause },
  );
}

/** True when `err` is {@link keyTaken}'s error. */
export function isKeyTaken(err: unknown): boolean {
  return isGatehouseError(err) && err.details.reason === KEY_TAKEN;
}

/**
 * True when a step was refused because another writer (a node sharing the database) stored the
 * same call first: its idempotency key, or the approval it resumes with. Nothing of the step is
 * stored, and what is stored is the other writer's to end.
 */
export function lostToAnotherWriter(err: unknown): boolean {
  return (
    isKeyTaken(err) ||
    isSettledMeanwhile(err) ||
    (isGatehouseError(err) && err.code === ErrorCode.APPROVAL_CONSUMED)
  );
}

/** The `details.reason` of {@link settledMeanwhile}. */
const SETTLED_MEANWHILE = 'settled-meanwhile';

/**
 * What {@link InvocationStore.save} throws when a step expected invocation `id` in status
 * `expected` and it had left it: another node (or the expiry of its approval) settled it first.
 * Nothing of the step is stored.
 */
export function settledMeanwhile(
  id: string,
  expected: string,
  found: string | undefined,
): GatehouseError {
  return new GatehouseError(
    ErrorCode.CONFLICT,
    `Invocation ${id} is ${found ?? 'missing'} now, not ${expected}: it was settled meanwhile.`,
    { details: { reason: SETTLED_MEANWHILE, invocationId: id, expected, found: found ?? null } },
  );
}

/** True when `err` is {@link settledMeanwhile}'s error. */
export function isSettledMeanwhile(err: unknown): boolean {
  return isGatehouseError(err) && err.details.reason === SETTLED_MEANWHILE;
}
