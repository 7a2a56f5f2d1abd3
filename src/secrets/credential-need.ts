import { exactOrigin } from '../core/index.js';

/** Secret names: lower-case letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
export const SECRET_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,62}$';

/** Scopes: printable ASCII without spaces, up to 128 characters (`github:read`, `deploy/prod`). */
export const SECRET_SCOPE_PATTERN = '^[\\x21-\\x7e]{1,128}$';

/** How an issued credential reaches the tool. */
export type CredentialInjection =
  /**
   * As an environment variable of the sandboxed process. A browser tool types such a secret into
   * a page (`fill`), so it must name the one exact origin whose pages may receive it, as a header
   * does: `origin`, or `host` alone for `https://<host>:443` (see {@link fillOrigin}).
   */
  | { env: string; host?: string; origin?: string }
  /** As a read-only file under `/run/secrets/`. */
  | { file: string }
  /**
   * As an HTTP request header; `format` wraps the value (`Bearer {value}`). Where it may go, as
   * one exact origin (scheme, host and port; see {@link headerOrigin}): `origin`
   * (`http://tickets.internal:8080`), or `host` alone, which means `https://<host>:443` — never
   * plain http and never another port of that host. Neither: every request of the call. At most
   * one of the two.
   */
  | { header: string; format?: string; host?: string; origin?: string };

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

/** Where a credential may go, by host alone: `https://<host>:443`. */
const HOST_PROPERTY = {
  type: 'string',
  pattern:
    '^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$',
  description: 'only to https://<host>:443',
} as const;

/** Where a credential may go, as one origin. */
const ORIGIN_PROPERTY = {
  type: 'string',
  maxLength: 300,
  pattern: '^https?://[^/?#@\\\\\\s]+/?$',
  description:
    'only to this origin: http(s)://host[:port], no user info or path (default port: 80 for http, 443 for https)',
} as const;

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
            host: HOST_PROPERTY,
            origin: ORIGIN_PROPERTY,
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
            host: HOST_PROPERTY,
            origin: ORIGIN_PROPERTY,
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

/**
 * The one origin a header injection is bound to, as {@link exactOrigin} spells it:
 * `origin` made exact (`http://a.example` is `http://a.example:80`), or for `host` alone
 * `https://<host>:443` — a credential meant for a host goes over TLS to its standard port only,
 * never in cleartext and never to another service on another port. Undefined when the need names
 * neither (every request of the call) or names an origin that is not one (see
 * {@link credentialNeedProblems}).
 */
export function headerOrigin(
  inject: Extract<CredentialInjection, { header: string }>,
): string | undefined {
  return boundOrigin(inject);
}

/**
 * The one origin whose pages a browser `fill` may type an environment-variable secret into, by
 * the rule of {@link headerOrigin}; undefined when the need names none.
 */
export function fillOrigin(
  inject: Extract<CredentialInjection, { env: string }>,
): string | undefined {
  return boundOrigin(inject);
}

function boundOrigin(inject: { host?: string; origin?: string }): string | undefined {
  if (inject.origin !== undefined) return exactOrigin(inject.origin);
  return inject.host === undefined ? undefined : exactOrigin(`https://${inject.host}`);
}

/**
 * Where a need injects, as one string: `env:TOKEN`, `file:/run/secrets/x`,
 * `header:authorization@https://api.example.com:443` (`@*` for every request of the call).
 */
export function injectionTarget(inject: CredentialInjection): string {
  if ('env' in inject) return `env:${inject.env}`;
  if ('file' in inject) return `file:${inject.file}`;
  return `header:${inject.header.toLowerCase()}@${headerOrigin(inject) ?? '*'}`;
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
    if (('header' in need.inject || 'env' in need.inject) && need.inject.origin !== undefined) {
      if (need.inject.host !== undefined)
        problems.push({ pointer, message: 'names both host and origin; give one' });
      else if (boundOrigin(need.inject) === undefined)
        problems.push({
          pointer,
          message: `names origin ${JSON.stringify(need.inject.origin)}, which is not an http(s) origin (http(s)://host[:port])`,
        });
    }
  });
  return problems;
}

/**
 * Header needs that name no origin, for a tool whose requests may go to many origins (a sandboxed
 * program, a browser: whatever its egress allows). Unbound, such a header would go to every one of
 * them, in cleartext over plain http; it must say where it goes. (A tool with one origin per call,
 * as the HTTP executor's, may leave it out: the call's own origin is meant.)
 */
export function unboundHeaderProblems(needs: readonly CredentialNeed[]): CredentialNeedProblem[] {
  const problems: CredentialNeedProblem[] = [];
  needs.forEach((need, i) => {
    if ('header' in need.inject && headerOrigin(need.inject) === undefined)
      problems.push({
        pointer: `/credentials/${i}/inject`,
        message: `names no origin for the ${need.inject.header} header: this tool's requests may go to any host its egress allows, so say where the credential goes (origin: "https://api.example.com" or "http://host:port", or host: "api.example.com" for https on 443)`,
      });
  });
  return problems;
}

/**
 * For a browser tool: each environment-variable secret (which a `fill` types into a page) must name
 * the origin whose pages may receive it, as a header must; unbound, it would be typed into any page
 * the browser reaches. For any other kind, a host or origin on an environment variable binds
 * nothing (a process reads it as it likes), so it is refused rather than trusted.
 */
export function fillBindingProblems(
  needs: readonly CredentialNeed[],
  browser: boolean,
): CredentialNeedProblem[] {
  const problems: CredentialNeedProblem[] = [];
  needs.forEach((need, i) => {
    if (!('env' in need.inject)) return;
    const pointer = `/credentials/${i}/inject`;
    const named = need.inject.host !== undefined || need.inject.origin !== undefined;
    if (browser && !named)
      problems.push({
        pointer,
        message: `names no origin for the secret ${need.ref}: a browser tool types it into a page, and it may reach any page its egress allows, so say whose pages may receive it (origin: "https://portal.example.com" or "http://host:port", or host: "portal.example.com" for https on 443)`,
      });
    if (!browser && named)
      problems.push({
        pointer,
        message: `binds the environment variable ${need.inject.env} to an origin, which only a browser tool's fill honours; a process reads its environment as it likes: leave host and origin out`,
      });
  });
  return problems;
}

/** Problems as sentences that name the need: `credentials/3 may not set the Host header`. */
export function credentialNeedSentences(problems: readonly CredentialNeedProblem[]): string[] {
  return problems.map((p) => `${p.pointer.slice(1)} ${p.message}`);
}

/** Two injections collide: the same variable or file, or the same header on a common origin. */
function overlaps(a: CredentialInjection, b: CredentialInjection): boolean {
  if ('header' in a && 'header' in b) {
    const [x, y] = [headerOrigin(a), headerOrigin(b)];
    return (
      a.header.toLowerCase() === b.header.toLowerCase() &&
      (x === undefined || y === undefined || x === y)
    );
  }
  return injectionTarget(a) === injectionTarget(b);
}
