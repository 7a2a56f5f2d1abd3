import { ErrorCode, GatehouseError } from '../core/index.js';
import { DEFAULT_CLAIMS } from '../oauth/index.js';
import type { ClaimNames } from '../oauth/index.js';
import type { ReachConfig } from './reach-config.js';

/** OAuth 2.1 access tokens this gateway accepts as a resource server (besides its own tokens). */
export interface OAuthConfig {
  issuer: string;
  /** The resource identifier tokens must name in `aud`; also served as RFC 9728 `resource`. */
  audience: string;
  jwksUri: string | null;
  algorithms: string[];
  claims: ClaimNames;
  clockToleranceSeconds: number;
}

/** Asymmetric JWS algorithms a configuration may allow (never `none`, never a shared secret). */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];

function invalid(message: string): GatehouseError {
  return new GatehouseError(ErrorCode.INVALID_INPUT, message);
}

function httpUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`${name} must be an http(s) URL; got ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalid(`${name} must be an http(s) URL; got ${JSON.stringify(value)}.`);
  return value;
}

/**
 * The OAuth settings from `GATEHOUSE_OAUTH_ISSUER` (unset: static tokens only),
 * `GATEHOUSE_OAUTH_AUDIENCE` (default the public URL), `GATEHOUSE_OAUTH_JWKS_URI` (default from
 * the issuer's metadata), `GATEHOUSE_OAUTH_ALGORITHMS` and `GATEHOUSE_OAUTH_CLAIMS`
 * (`tenant=CLAIM,roles=CLAIM,project=CLAIM,agent=CLAIM`, each optional).
 * @throws GatehouseError INVALID_INPUT naming the variable and what it must be
 */
export function loadOAuthConfig(env: NodeJS.ProcessEnv, reach: ReachConfig): OAuthConfig | null {
  const issuer = env.GATEHOUSE_OAUTH_ISSUER;
  if (issuer === undefined || issuer === '') return null;
  httpUrl(issuer, 'GATEHOUSE_OAUTH_ISSUER');
  const audience = env.GATEHOUSE_OAUTH_AUDIENCE || reach.publicUrl;
  if (!audience)
    throw invalid(
      'GATEHOUSE_OAUTH_ISSUER is set, so the gateway needs its resource URL, the audience its tokens name: set GATEHOUSE_PUBLIC_URL (or GATEHOUSE_OAUTH_AUDIENCE).',
    );
  httpUrl(audience, 'GATEHOUSE_OAUTH_AUDIENCE');
  const jwksUri = env.GATEHOUSE_OAUTH_JWKS_URI || null;
  if (jwksUri !== null) httpUrl(jwksUri, 'GATEHOUSE_OAUTH_JWKS_URI');
  const algorithms = (env.GATEHOUSE_OAUTH_ALGORITHMS || DEFAULT_ALGORITHMS.join(','))
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  const bad = algorithms.filter((a) => !ALGORITHMS.includes(a));
  if (bad.length > 0 || algorithms.length === 0)
    throw invalid(
      `GATEHOUSE_OAUTH_ALGORITHMS may list only asymmetric JWS algorithms (${ALGORITHMS.join(', ')}); ${bad.length > 0 ? `not ${bad.join(', ')}` : 'it is empty'}.`,
    );
  return {
    issuer,
    audience,
    jwksUri,
    algorithms,
    claims: claimNames(env.GATEHOUSE_OAUTH_CLAIMS ?? ''),
    clockToleranceSeconds: 30,
  };
}

function claimNames(value: string): ClaimNames {
  const claims = { ...DEFAULT_CLAIMS };
  for (const pair of value.split(',').filter((p) => p.trim() !== '')) {
    const [key, claim] = pair.split('=').map((x) => x.trim());
    if (!key || !claim || !(key in claims))
      throw invalid(
        `GATEHOUSE_OAUTH_CLAIMS takes KEY=CLAIM pairs with KEY one of ${Object.keys(claims).join(', ')}; got ${JSON.stringify(pair)}.`,
      );
    claims[key as keyof ClaimNames] = claim;
  }
  return claims;
}
