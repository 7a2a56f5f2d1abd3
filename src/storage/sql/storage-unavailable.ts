import { ErrorCode, GatehouseError } from '../../core/index.js';

/**
 * The error a write that storage refused rejects with: `UNAVAILABLE` (503, retryable), saying that
 * nothing of it was recorded and where to watch for recovery. The driver's error is its cause.
 */
export function storageUnavailable(code: string, cause: unknown): GatehouseError {
  return new GatehouseError(
    ErrorCode.UNAVAILABLE,
    `Gatehouse's storage refused a write (${code}${code.startsWith('SQLITE_FULL') ? ': the disk is full' : ''}); this request was not recorded. Retry it with the same Idempotency-Key once GET /readyz answers 200.`,
    { cause, details: { storage: code, retryable: true } },
  );
}
