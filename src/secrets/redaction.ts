/**
 * The vocabulary of redaction: what a removal records, the marker that replaces a secret, and the
 * rule a scanner matches. Brokered values (redaction-forms.ts) and known secret patterns
 * (secret-patterns.ts) are both expressed as {@link RedactionRule}s.
 */

/** How a removed brokered value was written in the text. Patterns leave the encoding unset. */
export const RemovalEncoding = {
  plain: 'plain',
  base64: 'base64',
  base64url: 'base64url',
  hex: 'hex',
  url: 'url',
  json: 'json',
} as const;
export type RemovalEncoding = (typeof RemovalEncoding)[keyof typeof RemovalEncoding];

/**
 * One kind of secret removed from a text or value, and how often. Never carries the secret.
 * `kind` is `brokered:<name>` for a value the broker issued, else a pattern kind such as
 * `private-key`, `aws-access-key`, `github-token` or `jwt`.
 */
export interface Removal {
  kind: string;
  encoding?: RemovalEncoding;
  count: number;
}

/**
 * A secret shape a scanner looks for. Sources of all rules are joined into one RegExp, so a source
 * must have no capturing groups and must not match the empty string.
 */
export interface RedactionRule {
  /** Recorded in the removal and shown in the marker. */
  readonly kind: string;
  /** Set for brokered forms; patterns leave it unset. */
  readonly encoding?: RemovalEncoding;
  /** RegExp source (no flags, no capturing groups). */
  readonly source: string;
  /**
   * The longest match. For a long pattern (with `window`), the length after which a stream stops
   * waiting for the match to end and decides on what it holds.
   */
  readonly maxLength: number;
  /**
   * Long patterns only: the longest text that can precede the point where the source first
   * matches something (its fixed prefix). Without it the rule is short: `maxLength` bounds it.
   */
  readonly window?: number;
  /** Characters past a match's end that decide whether it would end there. */
  readonly lookahead: number;
  /**
   * Brokered base64 fragments: how many characters of the 4-character quanta that hold the value
   * sit before and after the fragment (0–3). The scanner takes them in, so a removal covers whole
   * quanta: no character beside the marker encodes a bit of the value, and what is left on either
   * side decodes on its own.
   */
  readonly edges?: { readonly before: number; readonly after: number };
  /** Flexible brokered forms: a match equal to this text is recorded as `plain`. */
  readonly plain?: string;
  /** A check on a candidate match; false rejects it (the text stays). */
  readonly accept?: (match: string) => boolean;
  /** Parts of a match kept around the marker (a header name, JSON quotes). */
  readonly keep?: (match: string) => { prefix: string; suffix: string };
}

/**
 * A line break an encoder writes into its output (`base64` and MIME wrap at 76 columns, `openssl`
 * at 64, `xxd -p` at 60), as itself (LF or CRLF) or JSON-escaped (a backslash and `n`, or `\r\n` so escaped).
 */
export const ENCODED_LINE_BREAK = String.raw`(?:\r?\n|\\r\\n|\\n)`;
/** The longest {@link ENCODED_LINE_BREAK}. */
export const ENCODED_LINE_BREAK_MAX = 4;
/**
 * One base64 character as an encoder may write it: itself, `/` JSON-escaped (a backslash before it), or `+` and
 * `/` percent-encoded (`%2B`, `%2F`, either case).
 */
export const BASE64_UNIT = String.raw`(?:\\\/|%2[BbFf]|[A-Za-z0-9+/_-])`;
/** Base64 padding, as itself or percent-encoded. */
export const BASE64_PAD = String.raw`(?:=|%3[Dd])`;
/** The most text one base64 character takes, with the line break that may precede it. */
export const BASE64_UNIT_MAX = 3 + ENCODED_LINE_BREAK_MAX;

/** The text that replaces a removed secret: `[REDACTED:<kind>]`. */
export function redactionMarker(kind: string): string {
  // A name could hold characters that would break the JSON or URL the marker lands in.
  return `[REDACTED:${kind.replace(/[^A-Za-z0-9_.:@/-]/g, '_')}]`;
}

/** Escapes a string for use as a literal inside a RegExp source. */
export function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** Counts removals by kind and encoding, in the order first seen. */
export class RemovalTally {
  readonly #counts = new Map<string, Removal>();

  /** Notes `count` removals (default one). Safe to call any number of times. */
  add(kind: string, encoding: RemovalEncoding | undefined, count = 1): void {
    const key = `${kind}\u0000${encoding ?? ''}`;
    const found = this.#counts.get(key);
    if (found) found.count += count;
    else this.#counts.set(key, encoding ? { kind, encoding, count } : { kind, count });
  }

  /** A copy of the removals so far. */
  list(): Removal[] {
    return [...this.#counts.values()].map((r) => ({ ...r }));
  }
}
