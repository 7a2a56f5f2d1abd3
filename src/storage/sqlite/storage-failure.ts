/**
 * SQLite result codes that mean the storage under the database refused a write (disk full, an I/O
 * error, a read-only or vanished file), as opposed to a query that is wrong. Extended codes
 * (`SQLITE_IOERR_WRITE`) count by their primary code.
 */
const STORAGE_CODES = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CANTOPEN'];

/** The SQLite code of `err` when it is a storage failure (see {@link STORAGE_CODES}), else null. */
export function storageFailureCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  return STORAGE_CODES.some((c) => code === c || code.startsWith(`${c}_`)) ? code : null;
}
