import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import { ErrorCode, GatehouseError, sha256Hex } from '../core/index.js';
import type { Principal } from '../tenancy/index.js';
import { principalOf } from './claims.js';
import type { ClaimNames } from './claims.js';

/** Options of {@link AccessTokenVerifier}. */
export interface AccessTokenVerifierOptions {
  /** The authorization server's issuer identifier; tokens must carry it as `iss`. */
  issuer: string;
  /** This gateway's resource URL; tokens must carry it in `aud`. */
  audience: string;
  /** Where the issuer's keys are; when null, read from its metadata (`jwks_uri`). */
  jwksUri: string | null;
  /** Where `jwksUri` is set, named when the metadata has none (the config layer knows it). */
  jwksUriSetting?: string;
  /** Signature algorithms accepted (asymmetric only; never `none`). */
  algorithms: string[];
  claims: ClaimNames;
  /** Seconds of clock difference tolerated on `exp` and `nbf`. */
  clockToleranceSeconds: number;
  /** Whether a tenant exists here. */
  knownTenant: (id: string) => boolean;
}

/** What a verified access token proves: its principal, and the token's id and expiry. */
export interface ProvedToken {
  principal: Principal;
  token: { id: string; expiresAt: string };
}

/** How long a fetch of the issuer's metadata or keys may take. */
const FETCH_TIMEOUT_MS = 5000;

/**
 * Verifies OAuth 2.1 JWT access tokens of one authorization server (the MCP authorization
 * specification's resource server side): signature by a key of the issuer's JWKS (fetched and
 * cached by `jose`), `iss`, `aud`, `exp` and `nbf`, an allow-listed algorithm; then maps the
 * token's claims to a principal.
 */
export class AccessTokenVerifier {
  private keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  constructor(private readonly o: AccessTokenVerifierOptions) {}

  /**
   * @throws GatehouseError UNAUTHENTICATED saying why the token is refused (expired, another
   *   audience or issuer, an algorithm not accepted, a bad signature, a missing claim)
   */
  async verify(token: string): Promise<ProvedToken> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.jwks(), {
        issuer: this.o.issuer,
        audience: this.o.audience,
        algorithms: this.o.algorithms,
        clockTolerance: this.o.clockToleranceSeconds,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      if (err instanceof GatehouseError) throw err;
      throw new GatehouseError(ErrorCode.UNAUTHENTICATED, this.explain(err));
    }
    return {
      principal: principalOf(payload, this.o.claims, this.o.knownTenant),
      token: {
        id: `jwt:${typeof payload.jti === 'string' ? payload.jti.slice(0, 100) : sha256Hex(token).slice(0, 32)}`,
        expiresAt: new Date(payload.exp! * 1000).toISOString(),
      },
    };
  }

  private jwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.keys ??= this.jwksUri().then((uri) =>
      createRemoteJWKSet(new URL(uri), { timeoutDuration: FETCH_TIMEOUT_MS }),
    );
    // A failed discovery is tried again with the next token.
    this.keys.catch(() => (this.keys = undefined));
    return this.keys;
  }

  /** The configured JWKS URI, else the `jwks_uri` of the issuer's metadata (OIDC, then RFC 8414). */
  private async jwksUri(): Promise<string> {
    if (this.o.jwksUri !== null) return this.o.jwksUri;
    const base = this.o.issuer.replace(/\/$/, '');
    for (const path of [
      '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server',
    ]) {
      try {
        const res = await fetch(`${base}${path}`, {
          signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        });
        if (!res.ok) continue;
        const uri = ((await res.json()) as { jwks_uri?: unknown }).jwks_uri;
        if (typeof uri === 'string') return uri;
      } catch {
        // try the next document
      }
    }
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      `The access token cannot be checked now: the keys of issuer ${this.o.issuer} were not found (no jwks_uri in its metadata; set ${this.o.jwksUriSetting ?? 'the JWKS URI of the gateway'}).`,
    );
  }

  private explain(err: unknown): string {
    if (err instanceof errors.JWTExpired)
      return 'The access token has expired; get a new one from the authorization server.';
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.claim === 'aud')
        return `The access token is for another audience; this gateway accepts tokens for ${this.o.audience} (request it with resource=${this.o.audience}).`;
      if (err.claim === 'iss')
        return `The access token comes from another issuer; this gateway accepts tokens from ${this.o.issuer}.`;
      if (err.claim === 'nbf') return 'The access token is not valid yet (nbf).';
      return `The access token's claim ${err.claim} is not acceptable: ${err.message}.`;
    }
    if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
      return `The access token is signed with an algorithm this gateway does not accept (accepted: ${this.o.algorithms.join(', ')}).`;
    if (err instanceof errors.JWKSNoMatchingKey)
      return `No key of issuer ${this.o.issuer} matches the access token's key id.`;
    if (err instanceof errors.JWSSignatureVerificationFailed)
      return 'The access token signature does not verify.';
    if (err instanceof errors.JWKSTimeout || !(err instanceof errors.JOSEError))
      return `The access token cannot be checked now: the keys of issuer ${this.o.issuer} could not be fetched.`;
    return `The access token is not a valid JWT: ${(err as Error).message}.`;
  }
}
