import { ErrorCode, isGatehouseError } from '../core/index.js';

/** The broker's error code when `err` is a credential failure, else undefined. */
export function credentialCode(err: unknown): ErrorCode | undefined {
  if (!isGatehouseError(err)) return undefined;
  return err.code.startsWith('CREDENTIAL_') || err.code === ErrorCode.INVALID_DESCRIPTOR
    ? err.code
    : undefined;
}
