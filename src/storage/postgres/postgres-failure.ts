/** Node.js socket errors that mean the database server cannot be reached. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The code of `err` when it means the database is out of reach (a refused or lost connection, a
 * server shutting down or starting, too many connections), as opposed to a query that is wrong or
 * refused; else null. SQLSTATE class 08 and 57P01–57P03, socket errors by their code, and the
 * `pg` client's own "Connection terminated" errors (which carry no code) as `CONNECTION_LOST`.
 */
export function connectionFailureCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) {
      return `SQLSTATE ${code}`;
    }
    if (SOCKET_CODES.has(code)) return code;
  }
  const message = err instanceof Error ? err.message : '';
  if (
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
      message,
    )
  ) {
    return 'CONNECTION_LOST';
  }
  return null;
}
