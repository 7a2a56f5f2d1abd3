import {
  BASE64_UNIT_MAX,
  ENCODED_LINE_BREAK,
  ENCODED_LINE_BREAK_MAX,
  RemovalEncoding,
  escapeRegExp,
} from './redaction.js';
import type { RedactionRule } from './redaction.js';

/**
 * Base64 and hex forms shorter than this are not looked for: a shorter run is a plausible chance
 * substring of ordinary encoded data, and removing it would corrupt that data. Seven base64
 * characters are 42 bits (the six base64 forms of one value hit one random megabyte of base64 by
 * chance about once in 700 000 megabytes; five characters would, once in 200). Seven is also the
 * shortest length that keeps all three alignments of a 6-byte value. So base64 (both alphabets,
 * every alignment) is looked for when a value has 6 or more bytes, hex when it has 4 or more;
 * shorter values are removed in their plain, URL-encoded and JSON-escaped forms only. The plain
 * form is always removed, whatever its length.
 */
const MIN_ENCODED_FORM_LENGTH = 7;

/** Characters no URL encoder changes. */
const URL_SAFE = /^[A-Za-z0-9_.-]$/;
/** Characters JSON encoders write as themselves (all printable ASCII but `"`, `\`, `/`, `<`, `>`, `&`). */
const JSON_SAFE = /^[ !#-%'-.0-;=?-[\]-~]$/;
const JSON_SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/**
 * The rules that find one brokered value in a text: its plain form, JSON-escaped and URL-encoded
 * forms (any encoder: upper- or lower-case escapes, `+` or `%20` for a space, characters left as
 * they are, or every byte escaped), hex in either case (run together, wrapped or byte by byte),
 * and base64 in both alphabets (wrapped, JSON-escaped or URL-encoded too). Base64 is matched by the
 * part of the encoding that the value alone decides, at each of the three byte offsets it can sit
 * at, so the value is found padded, unpadded and inside a longer base64 text; the scanner then
 * takes in the rest of the quanta that hold it (see {@link base64Edges}). An empty value gives no
 * rules.
 */
export function brokeredForms(name: string, value: string): RedactionRule[] {
  if (value === '') return [];
  const kind = `brokered:${name}`;
  const rules: RedactionRule[] = [];
  rules.push({
    kind,
    encoding: RemovalEncoding.plain,
    source: escapeRegExp(value),
    maxLength: value.length,
    lookahead: 0,
  });
  for (const [encoding, flexible] of [
    [RemovalEncoding.json, jsonEscapedForm(value)],
    [RemovalEncoding.url, urlEncodedForm(value)],
  ] as const) {
    if (flexible) {
      rules.push({ kind, encoding, ...flexible, lookahead: 0, plain: value });
    }
  }

  const bytes = Buffer.from(value, 'utf8');
  rules.push({ kind, encoding: RemovalEncoding.url, ...percentEncodedForm(bytes), lookahead: 0 });
  if (2 * bytes.length >= MIN_ENCODED_FORM_LENGTH) {
    rules.push({ kind, encoding: RemovalEncoding.hex, ...hexForm(bytes), lookahead: 0 });
  }
  for (const alphabet of [RemovalEncoding.base64, RemovalEncoding.base64url] as const) {
    for (const offset of [0, 1, 2]) {
      const inner = base64Inner(bytes, offset, alphabet);
      if (inner.length < MIN_ENCODED_FORM_LENGTH) continue;
      const edges = base64Edges(bytes.length, offset);
      rules.push({
        kind,
        encoding: alphabet,
        ...base64Form(inner),
        lookahead: edges.after * BASE64_UNIT_MAX,
        edges,
      });
    }
  }

  const seen = new Set<string>();
  return rules.filter((r) => !seen.has(r.source) && seen.add(r.source));
}

/**
 * How many characters of the quanta holding `length` bytes at byte `offset` of a quantum lie
 * before and after {@link base64Inner}'s fragment: the characters mixing the value's bits with its
 * neighbours', the neighbours' own characters in those quanta, and padding.
 */
export function base64Edges(length: number, offset: number): { before: number; after: number } {
  const end = offset + length;
  return {
    before: Math.ceil((8 * offset) / 6),
    after: 4 * Math.ceil(end / 3) - Math.floor((8 * end) / 6),
  };
}

/**
 * The characters of base64(`offset` bytes of anything + `bytes` + anything) that depend on `bytes`
 * alone: those whose six bits all fall inside the value.
 */
export function base64Inner(bytes: Uint8Array, offset: number, alphabet: 'base64' | 'base64url') {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString(alphabet);
  const first = Math.ceil((8 * offset) / 6);
  const end = Math.floor((8 * (offset + bytes.length)) / 6);
  return encoded.slice(first, end);
}

/**
 * A base64 fragment as encoders write it: wrapped (a line break between any two characters),
 * inside JSON (`/` escaped as a backslash and `/`, line breaks as `\\n`) or URL-encoded (`+`, `/`
 * as `%2B`, `%2F`).
 */
function base64Form(inner: string): FlexibleForm {
  const units = [...inner].map((ch) => {
    if (ch === '/') return { source: String.raw`(?:\\\/|%2[Ff]|\/)`, length: 3 };
    if (ch === '+') return { source: String.raw`(?:%2[Bb]|\+)`, length: 3 };
    return { source: escapeRegExp(ch), length: 1 };
  });
  return {
    source: units.map((u) => u.source).join(`${ENCODED_LINE_BREAK}?`),
    maxLength:
      units.reduce((n, u) => n + u.length, 0) + (units.length - 1) * ENCODED_LINE_BREAK_MAX,
  };
}

/** Separators hex dumps put between bytes: a space or colon (`od`, `openssl`), a line break. */
const HEX_SEPARATOR = String.raw`(?:[ :]|${ENCODED_LINE_BREAK} ?)?`;

/** The value in hex, either case, bytes run together, wrapped (`xxd -p`) or separated (`od`). */
function hexForm(bytes: Uint8Array): FlexibleForm {
  const pairs = [...bytes].map((b) => hexDigits(b.toString(16).padStart(2, '0')));
  return {
    source: pairs.join(HEX_SEPARATOR),
    maxLength: 2 * pairs.length + (pairs.length - 1) * (ENCODED_LINE_BREAK_MAX + 1),
  };
}

/** Every byte percent-encoded, either case (an encoder that leaves no character as it is). */
function percentEncodedForm(bytes: Uint8Array): FlexibleForm {
  return {
    source: [...bytes].map((b) => `%${hexDigits(b.toString(16).padStart(2, '0'))}`).join(''),
    maxLength: 3 * bytes.length,
  };
}

interface FlexibleForm {
  source: string;
  maxLength: number;
}

/** A source matching `value` with each character either as itself or as one of `alternatives`. */
function flexible(
  value: string,
  fixed: (ch: string) => boolean,
  alternatives: (ch: string) => { source: string; length: number }[],
): FlexibleForm | undefined {
  let source = '';
  let maxLength = 0;
  let varies = false;
  for (const ch of value) {
    if (fixed(ch)) {
      source += escapeRegExp(ch);
      maxLength += ch.length;
      continue;
    }
    varies = true;
    // Longest first: an alternative that is a prefix of another (`%` of `%25`) must not win and
    // leave the rest of the encoded character beside the marker.
    const alts = alternatives(ch).sort((a, b) => b.length - a.length);
    source += `(?:${alts.map((a) => a.source).join('|')})`;
    maxLength += Math.max(...alts.map((a) => a.length));
  }
  return varies ? { source, maxLength } : undefined;
}

/** A hex digit in either case. */
function hexDigits(hex: string): string {
  return [...hex]
    .map((d) => (/[a-f]/i.test(d) ? `[${d.toUpperCase()}${d.toLowerCase()}]` : d))
    .join('');
}

function urlEncodedForm(value: string): FlexibleForm | undefined {
  return flexible(
    value,
    (ch) => URL_SAFE.test(ch),
    (ch) => {
      const bytes = Buffer.from(ch, 'utf8');
      const percent = [...bytes].map((b) => `%${hexDigits(b.toString(16).padStart(2, '0'))}`);
      const alts = [
        { source: escapeRegExp(ch), length: ch.length },
        { source: percent.join(''), length: 3 * bytes.length },
      ];
      if (ch === ' ') alts.push({ source: '\\+', length: 1 });
      return alts;
    },
  );
}

function jsonEscapedForm(value: string): FlexibleForm | undefined {
  return flexible(
    value,
    (ch) => JSON_SAFE.test(ch),
    (ch) => {
      const alts: { source: string; length: number }[] = [];
      if (ch >= ' ' && ch !== '"' && ch !== '\\')
        alts.push({ source: escapeRegExp(ch), length: ch.length });
      const short = JSON_SHORT_ESCAPES[ch];
      if (short) alts.push({ source: escapeRegExp(short), length: short.length });
      // \uXXXX for each UTF-16 unit (a surrogate pair for characters beyond the BMP), either case.
      const units = [...Array(ch.length).keys()].map((i) =>
        ch.charCodeAt(i).toString(16).padStart(4, '0'),
      );
      alts.push({
        source: units.map((u) => `\\\\u${hexDigits(u)}`).join(''),
        length: 6 * units.length,
      });
      return alts;
    },
  );
}
