import { V7Generator, uuidv7 } from 'uuidv7';
import type { Clock } from './clock.js';

/** Makes new ids. Time-ordered so that SQLite's B-tree indexes stay append-mostly. */
export interface IdGenerator {
  /** A new unique id; never repeats within a process. */
  next(): string;
}

/** UUIDv7 ids (RFC 9562): time-ordered, 74 random bits. */
export const uuidv7Ids: IdGenerator = { next: () => uuidv7() };

/** Sequential ids with a prefix; for tests that assert on exact values. */
export class SequentialIds implements IdGenerator {
  private issued = 0;
  constructor(private readonly prefix = 'id') {}
  next(): string {
    this.issued += 1;
    return `${this.prefix}-${String(this.issued).padStart(8, '0')}`;
  }
}

/**
 * UUIDv7 ids that only ever increase, whatever the clock does: each is above every id this
 * generator issued and above `after` (the largest id already stored), so what is listed in id
 * order (newest first) stays in the order it was made after a clock step back or a restart. The
 * timestamp part is the clock's reading, or, while the clock reads earlier than the last id, that
 * id's with a larger counter.
 */
export function monotonicIds(clock: Clock, after?: string): IdGenerator {
  const generator = new V7Generator();
  // Never reset on a rollback (the whole 48-bit range is allowed): keep the last timestamp and
  // count up from it.
  generator.setRollbackAllowance(2 ** 48 - 1);
  const floor =
    after !== undefined && /^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(after)
      ? parseInt(after.replace(/-/g, '').slice(0, 12), 16) + 1
      : 0;
  return {
    next: () => generator.generateOrResetWithTs(Math.max(clock.now(), floor)).toString(),
  };
}
