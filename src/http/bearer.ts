import { ErrorCode, GatehouseError } from '../core/index.js';

/**
 * The token of an `Authorization: Bearer <token>` header: printable ASCII, at most `maxLength`.
 * `noun` names the token in messages (`token`, `agent token`).
 * @throws GatehouseError UNAUTHENTICATED when the header is missing or not of that form.
 */
export function bearerToken(header: string | undefined, noun: string, maxLength: number): string {
  if (header === undefined)
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      `Authorization header missing: send "Authorization: Bearer <${noun}>".`,
    );
  const token = new RegExp(`^Bearer ([\\x21-\\x7e]{1,${maxLength}})$`).exec(header)?.[1];
  if (token === undefined)
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      `Authorization header must be "Bearer <${noun}>".`,
    );
  return token;
}
