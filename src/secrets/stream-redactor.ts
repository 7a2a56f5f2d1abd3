import { IllegalStateError } from '../core/index.js';
import type { RedactionScanner } from './redaction-scanner.js';
import { RemovalTally } from './redaction.js';
import type { Removal } from './redaction.js';

/** Characters of released input kept so look-behinds at the next chunk see what preceded it. */
const CONTEXT = 16;

/**
 * Redacts a stream chunk by chunk. The text it has not released is at most the scanner's hold-back
 * (the longest brokered form or short pattern), or, while a long pattern (a PEM key, a JWT, a bearer
 * token) is still running into the end of the input, that pattern's bound. Create with
 * {@link Redactor.stream}; one stream per output, not shared between outputs.
 */
export class StreamRedactor {
  readonly #scanner: RedactionScanner;
  readonly #tally = new RemovalTally();
  /** The tail of released input, for look-behinds only. */
  #context = '';
  /** Input not yet released. */
  #pending = '';
  #ended = false;

  /** Use {@link Redactor.stream}; the scanner is the redactor's, shared read-only. */
  constructor(scanner: RedactionScanner) {
    this.#scanner = scanner;
  }

  /**
   * Takes the next chunk and returns the redacted text that no later chunk can change (possibly '').
   * @throws IllegalStateError after `end()`.
   */
  push(chunk: string): string {
    if (this.#ended) throw new IllegalStateError('push after end on a redaction stream');
    this.#pending += chunk;
    return this.#release(false);
  }

  /** Releases everything still held, redacted. Safe to call twice (the second call returns ''). */
  end(): string {
    if (this.#ended) return '';
    this.#ended = true;
    return this.#release(true);
  }

  /**
   * The most input held back while no long pattern (a PEM key, a JWT, a bearer token) runs into
   * the end of the input: the longest brokered form or short pattern, plus what decides its end,
   * plus the characters before it a base64 fragment found later may take in.
   */
  get holdBack(): number {
    return this.#scanner.holdBack + this.#scanner.reachBack;
  }

  /** What was removed so far, by kind (never the values). */
  removals(): Removal[] {
    return this.#tally.list();
  }

  #release(atEnd: boolean): string {
    const text = this.#context + this.#pending;
    const from = this.#context.length;
    const { hits, openAt } = this.#scanner.scan(text, from, !atEnd);
    let limit = atEnd ? text.length : Math.min(openAt, text.length - this.#scanner.holdBack);
    const done = hits.filter((h) => h.start < limit);
    const last = done.at(-1)?.end ?? from;
    // The characters before the limit that a base64 fragment found later may take in are kept.
    limit = atEnd ? text.length : Math.max(last, limit - this.#scanner.reachBack, from);
    const out = this.#scanner.rewrite(text, from, limit, done, this.#tally);
    this.#context = text.slice(Math.max(0, limit - CONTEXT), limit);
    this.#pending = text.slice(limit);
    return out;
  }
}
