import { escapeRegExp } from './redaction.js';
import type { RedactionRule } from './redaction.js';

/**
 * Known secret shapes removed from every text even when the broker did not issue them. Each is
 * anchored so it starts only at the start of a token (a look-behind on the token's alphabet), which
 * keeps them precise and keeps the scan linear: no pattern is tried again inside a run it rejected.
 */

/** A word matched in any letter case, without the `i` flag (that would apply to every rule). */
function anyCase(word: string): string {
  return [...word]
    .map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : escapeRegExp(c)))
    .join('');
}

/** A header-ish `name: ` / `"name": "` / `name=` separator. */
const ASSIGN = String.raw`["']?[ \t]{0,8}[:=][ \t]{0,8}["']?`;
const PEM_LABEL = String.raw`[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----`;

function keepBefore(pattern: RegExp): NonNullable<RedactionRule['keep']> {
  return (match) => ({ prefix: pattern.exec(match)?.[0] ?? '', suffix: '' });
}

/** True when the first dot-separated segment decodes to a JSON object naming an `alg`. */
function isJwt(match: string): boolean {
  const segments = match.split('.');
  if (segments.length === 4 && segments[3] === '') segments.pop();
  if (segments.length !== 3 && segments.length !== 5) return false;
  // `{"alg":"x"}` is 15 characters encoded; checking for "alg" first spares most throws.
  const text = Buffer.from(segments[0] ?? '', 'base64url').toString('utf8');
  if (text.length < 11 || !text.includes('"alg"')) return false;
  try {
    const header: unknown = JSON.parse(text);
    return (
      typeof header === 'object' &&
      header !== null &&
      typeof (header as { alg?: unknown }).alg === 'string'
    );
  } catch {
    return false;
  }
}

const BEARER_PREFIX = /^[Bb]earer[ \t]+/;

/** A bearer credential is long, or mixes letters with digits or punctuation; prose is neither. */
function isBearerToken(match: string): boolean {
  const token = match.replace(BEARER_PREFIX, '');
  return token.length >= 24 || (token.length >= 8 && /[0-9._~+/-]/.test(token));
}

const PRIVATE_KEY_FIELD = /^("private_key"\s*:\s*")((?:[^"\\]|\\[\s\S])*)("?)$/;

/** The patterns, in the order they are tried at one position. */
export const SECRET_PATTERNS: readonly RedactionRule[] = [
  {
    // A service-account JSON's key: the whole string value, even if it is cut short.
    kind: 'private-key',
    source: String.raw`"private_key"\s{0,16}:\s{0,16}"(?=-----BEGIN)(?:[^"\\]|\\[\s\S])*"?`,
    maxLength: 32_768,
    window: 60,
    lookahead: 2,
    keep: (match) => {
      const parts = PRIVATE_KEY_FIELD.exec(match);
      return { prefix: parts?.[1] ?? '', suffix: parts?.[3] ?? '' };
    },
  },
  {
    // PEM (PKCS#1, PKCS#8, SEC1, OpenSSH, PGP), also JSON-escaped; cut-short keys lose the body.
    kind: 'private-key',
    source:
      String.raw`-----BEGIN${PEM_LABEL}(?:[A-Za-z0-9+/=:, \t\r\n\\]|-(?!----))*` +
      String.raw`(?:-----END${PEM_LABEL})?`,
    maxLength: 32_768,
    window: 80,
    lookahead: 80,
  },
  {
    kind: 'aws-access-key',
    source: String.raw`(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])`,
    maxLength: 20,
    lookahead: 1,
  },
  {
    kind: 'aws-secret-key',
    source:
      String.raw`(?<![A-Za-z0-9])(?:${anyCase('aws_')})?${anyCase('secret')}_?${anyCase('access')}_?${anyCase('key')}` +
      String.raw`${ASSIGN}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])`,
    maxLength: 96,
    lookahead: 1,
    keep: (match) => ({ prefix: match.slice(0, -40), suffix: '' }),
  },
  {
    kind: 'github-token',
    source: String.raw`(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{50,244})(?![A-Za-z0-9_])`,
    maxLength: 255,
    lookahead: 1,
  },
  {
    kind: 'gitlab-token',
    source: String.raw`(?<![A-Za-z0-9_-])gl(?:pat|ptt|dt|rt|cbt|soat)-[A-Za-z0-9_-]{20,300}(?:\.[A-Za-z0-9_-]{1,64}){0,3}(?![A-Za-z0-9_-])`,
    maxLength: 512,
    lookahead: 2,
  },
  {
    kind: 'slack-token',
    source: String.raw`(?<![A-Za-z0-9_-])xox[abprs]-[0-9]{1,20}-[A-Za-z0-9-]{8,250}(?![A-Za-z0-9_-])`,
    maxLength: 280,
    lookahead: 1,
  },
  {
    kind: 'npm-token',
    source: String.raw`(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])`,
    maxLength: 40,
    lookahead: 1,
  },
  {
    // Any base64url run starting with `{"`; `accept` keeps only real JWS/JWE compact tokens.
    kind: 'jwt',
    source: String.raw`(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{12,}(?:\.[A-Za-z0-9_-]*){0,4}`,
    maxLength: 16_384,
    window: 15,
    lookahead: 2,
    accept: isJwt,
    keep: (match) => ({
      prefix: '',
      suffix: match.endsWith('.') && match.split('.').length === 4 ? '.' : '',
    }),
  },
  {
    kind: 'bearer-token',
    source: String.raw`(?<![A-Za-z0-9_-])[Bb]earer[ \t]{1,16}[A-Za-z0-9._~+/-]+=*`,
    maxLength: 8_192,
    window: 24,
    lookahead: 2,
    accept: isBearerToken,
    keep: keepBefore(BEARER_PREFIX),
  },
  {
    kind: 'basic-auth',
    source:
      String.raw`(?<![A-Za-z0-9_-])${anyCase('authorization')}${ASSIGN}${anyCase('basic')}[ \t]{1,8}` +
      String.raw`(?:[A-Za-z0-9+/]{4}){1,128}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=])`,
    maxLength: 600,
    lookahead: 1,
    keep: keepBefore(/^.*[Bb][Aa][Ss][Ii][Cc][ \t]+/),
  },
];
