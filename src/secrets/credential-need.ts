/** Secret names: lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
export const SECRET_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,62}$';

/** Scopes: printable ASCII without spaces, up to 128 characters (`github:read`, `deploy/prod`). */
export const SECRET_SCOPE_PATTERN = '^[\\x21-\\x7e]{1,128}$';

/** How an issued credential reaches the tool. */
export type CredentialInjection =
  /** As an environment variable of the sandboxed process. */
  | { env: string }
  /** As a read-only file under `/run/secrets/`. */
  | { file: string }
  /**
   * As an HTTP request header; `format` wraps the value (`Bearer {value}`), `host` limits the
   * header to requests to that host (absent: every request of the call).
   */
  | { header: string; format?: string; host?: string };

/** One credential a descriptor declares (`descriptor.credentials[]`). */
export interface CredentialNeed {
  /** The name of the secret. */
  ref: string;
  /** The scope asked for; must be one of the secret's scopes. */
  scope: string;
  inject: CredentialInjection;
}

// Names a credential must not take over: the loader, paths and the egress proxy settings.
const RESERVED_ENV = '(?!LD_)(?!(?:PATH|HOME|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|ALL_PROXY)$)';

/**
 * JSON Schema (2020-12) of one {@link CredentialNeed}. Descriptors are validated with
 * {@link credentialNeedsSchema}, then {@link credentialNeedProblems} (what a schema cannot say).
 */
export const credentialNeedSchema = {
  type: 'object',
  required: ['ref', 'scope', 'inject'],
  additionalProperties: false,
  properties: {
    ref: { type: 'string', pattern: SECRET_NAME_PATTERN, description: 'the secret name' },
    scope: { type: 'string', pattern: SECRET_SCOPE_PATTERN },
    inject: {
      oneOf: [
        {
          type: 'object',
          required: ['env'],
          additionalProperties: false,
          properties: {
            env: { type: 'string', pattern: `^${RESERVED_ENV}[A-Z_][A-Z0-9_]{0,127}$` },
          },
        },
        {
          type: 'object',
          required: ['file'],
          additionalProperties: false,
          properties: { file: { type: 'string', pattern: '^/run/secrets/[A-Za-z0-9._-]{1,128}$' } },
        },
        {
          type: 'object',
          required: ['header'],
          additionalProperties: false,
          properties: {
            header: { type: 'string', pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$" },
            format: {
              type: 'string',
              maxLength: 256,
              pattern: '^[\\x20-\\x7a\\x7c\\x7e]*\\{value\\}[\\x20-\\x7a\\x7c\\x7e]*$',
              description: 'printable ASCII holding {value} once, e.g. "Bearer {value}"',
            },
            host: {
              type: 'string',
              pattern:
                '^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$',
            },
          },
        },
      ],
    },
  },
} as const;

/** JSON Schema of `descriptor.credentials`: a list of {@link credentialNeedSchema}. */
export const credentialNeedsSchema = {
  type: 'array',
  maxItems: 32,
  items: credentialNeedSchema,
} as const;

/** Where a need injects, as one string (`env:TOKEN`, `file:/run/secrets/x`, `header:authorization@host`). */
export function injectionTarget(inject: CredentialInjection): string {
  if ('env' in inject) return `env:${inject.env}`;
  if ('file' in inject) return `file:${inject.file}`;
  return `header:${inject.header.toLowerCase()}@${inject.host ?? '*'}`;
}

// Headers that frame the request; a credential must not set them.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/** One problem of a list of needs: where it is and what is wrong. */
export interface CredentialNeedProblem {
  /** JSON pointer of the need within its descriptor, e.g. `/credentials/3`. */
  pointer: string;
  /** What is wrong, e.g. `may not set the Host header`. */
  message: string;
}

/**
 * What a schema cannot check in a list of needs that passed {@link credentialNeedsSchema}: two
 * needs injecting into the same place, and headers that frame the request. One problem per
 * finding, pointing at the need; empty when the list is sound.
 */
export function credentialNeedProblems(needs: readonly CredentialNeed[]): CredentialNeedProblem[] {
  const problems: CredentialNeedProblem[] = [];
  needs.forEach((need, i) => {
    const pointer = `/credentials/${i}`;
    const first = needs.findIndex((other, j) => j < i && overlaps(other.inject, need.inject));
    if (first !== -1)
      problems.push({
        pointer,
        message: `injects into ${injectionTarget(need.inject)}, as credentials/${first} already does`,
      });
    if ('header' in need.inject && RESERVED_HEADERS.has(need.inject.header.toLowerCase()))
      problems.push({ pointer, message: `may not set the ${need.inject.header} header` });
  });
  return problems;
}

/** Problems as sentences that name the need: `credentials/3 may not set the Host header`. */
export function credentialNeedSentences(problems: readonly CredentialNeedProblem[]): string[] {
  return problems.map((p) => `${p.pointer.slice(1)} ${p.message}`);
}

/** Two injections collide: the same variable or file, or the same header on a common host. */
function overlaps(a: CredentialInjection, b: CredentialInjection): boolean {
  if ('header' in a && 'header' in b) {
    return (
      a.header.toLowerCase() === b.header.toLowerCase() &&
      (a.host === undefined || b.host === undefined || a.host === b.host)
    );
  }
  return injectionTarget(a) === injectionTarget(b);
}
