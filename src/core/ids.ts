import { uuidv7 } from 'uuidv7';

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
