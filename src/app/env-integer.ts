import { ErrorCode, GatehouseError } from '../core/index.js';

/**
 * A setting that holds a whole number ≥ 0, written as digits only (no sign, no exponent); unset
 * or empty is undefined. `expected` says what it must be in the error (default "a non-negative
 * integer").
 * @throws GatehouseError INVALID_INPUT naming the setting and what it got.
 */
export function envInteger(
  raw: string | undefined,
  name: string,
  expected = 'a non-negative integer',
): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw))
    throw new GatehouseError(
      ErrorCode.INVALID_INPUT,
      `${name} must be ${expected}; got ${JSON.stringify(raw)}.`,
    );
  return Number(raw);
}
