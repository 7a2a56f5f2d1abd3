import { IllegalStateError } from '../core/index.js';
import { brokeredForms } from './redaction-forms.js';
import { RedactionScanner } from './redaction-scanner.js';
import { RemovalTally } from './redaction.js';
import type { RedactionRule, Removal } from './redaction.js';
import { SECRET_PATTERNS } from './secret-patterns.js';
import { StreamRedactor } from './stream-redactor.js';

/** A credential value issued for one call; `name` is what removals record, never the value. */
export interface BrokeredValue {
  name: string;
  value: string;
}

/** Options of a {@link Redactor}. */
export interface RedactorOptions {
  /** Also remove known secret shapes (private keys, cloud and forge tokens, JWTs). Default true. */
  patterns?: boolean;
}

/** Options of {@link Redactor.redactJson}. */
export interface RedactJsonOptions {
  /**
   * The value went through a channel that folds letter case (a host name the egress proxy
   * lower-cased): brokered values are also removed in any case, in every form.
   */
  foldCase?: boolean;
}

/**
 * Removes secrets from tool output, errors, traces, audit records and receipts: every brokered
 * value of the call in its plain, base64, hex, URL-encoded and JSON-escaped forms, and known secret
 * patterns. Each removal becomes `[REDACTED:<kind>]` and is counted by kind, never by value.
 * Immutable and safe to share between concurrent uses; every method may be repeated.
 */
export class Redactor {
  readonly #scanner: RedactionScanner;
  /** The brokered forms, for the case-folding scanner. */
  readonly #forms: readonly RedactionRule[];
  #folded: RedactionScanner | undefined;

  /**
   * Builds the one combined matcher for the call's values (each in all its forms; empty values are
   * ignored) and, unless `patterns` is false, the known secret patterns.
   */
  constructor(values: readonly BrokeredValue[], options: RedactorOptions = {}) {
    const seen = new Set<string>();
    const forms = values
      .flatMap((v) => brokeredForms(v.name, v.value))
      .filter((r) => !seen.has(r.source) && seen.add(r.source))
      // At one position the longest form wins, so a value inside another is not half-removed.
      .sort((a, b) => b.maxLength - a.maxLength);
    this.#forms = forms;
    this.#scanner = new RedactionScanner([
      ...forms,
      ...((options.patterns ?? true) ? SECRET_PATTERNS : []),
    ]);
  }

  /** The text with every secret replaced by its marker, and what was removed. */
  redactText(text: string): { text: string; removals: Removal[] } {
    const tally = new RemovalTally();
    return { text: this.#redact(text, tally), removals: tally.list() };
  }

  /**
   * A copy of a JSON-like value with every string inside redacted, object keys included. Walks the
   * value as `JSON.stringify` would see it (`toJSON` is called, other objects are read by their
   * own enumerable keys); numbers, booleans, null and undefined are kept as they are.
   * @throws IllegalStateError when the value contains a cycle.
   */
  redactJson<T>(value: T, options: RedactJsonOptions = {}): { value: T; removals: Removal[] } {
    const tally = new RemovalTally();
    const path = new Set<object>();
    const folded = options.foldCase === true ? this.#foldedScanner() : undefined;
    const text = (s: string): string => {
      const once = this.#redact(s, tally);
      return folded ? redactWith(folded, once, tally) : once;
    };
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return text(v);
      if (typeof v !== 'object' || v === null) return v;
      const json = (v as { toJSON?: unknown }).toJSON;
      if (typeof json === 'function') return walk((json as () => unknown).call(v));
      if (path.has(v)) throw new IllegalStateError('redactJson was given a value with a cycle');
      path.add(v);
      try {
        if (Array.isArray(v)) return v.map(walk);
        const out: Record<string, unknown> = {};
        for (const [key, inner] of Object.entries(v)) {
          const k = text(key);
          const value = walk(inner);
          // defineProperty only where assignment would not make a key ("__proto__"): it costs
          // several times a plain assignment, and every call's trace is walked here.
          if (k === '__proto__') {
            Object.defineProperty(out, k, {
              value,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          } else out[k] = value;
        }
        return out;
      } finally {
        path.delete(v);
      }
    };
    return { value: walk(value) as T, removals: tally.list() };
  }

  /**
   * A redactor for streamed output (stdout, stderr): `push` returns what can be released of each
   * chunk, holding back only a tail that could still be the start of a secret split across
   * chunks; `end` releases the rest. The output equals `redactText` of the whole stream.
   */
  stream(): StreamRedactor {
    return new StreamRedactor(this.#scanner);
  }

  #redact(text: string, tally: RemovalTally): string {
    return redactWith(this.#scanner, text, tally);
  }

  /** The brokered forms matched in any letter case; compiled on first use. */
  #foldedScanner(): RedactionScanner | undefined {
    if (this.#forms.length === 0) return undefined;
    this.#folded ??= new RedactionScanner(this.#forms, true);
    return this.#folded;
  }
}

function redactWith(scanner: RedactionScanner, text: string, tally: RemovalTally): string {
  const { hits } = scanner.scan(text, 0, false);
  return hits.length === 0 ? text : scanner.rewrite(text, 0, text.length, hits, tally);
}

let shared: Redactor | undefined;

/**
 * The one Redactor of known secret patterns only (no brokered values), compiled on first use and
 * shared: compiling the patterns costs more than a whole pipeline stage.
 */
export function patternRedactor(): Redactor {
  shared ??= new Redactor([]);
  return shared;
}
