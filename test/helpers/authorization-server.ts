import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import Provider from 'oidc-provider';

/** A client of the test authorization server and the claims its tokens carry. */
export interface TestClient {
  id: string;
  secret: string;
  claims: Record<string, unknown>;
}

/** A real OAuth 2.1 authorization server (oidc-provider) on loopback, issuing JWT access tokens. */
export interface AuthorizationServer {
  issuer: string;
  /** The private key its tokens are signed with (to forge variants of a valid token). */
  privateKey: CryptoKey;
  kid: string;
  /** A client_credentials access token for `client`, for `resource`. */
  token(client: TestClient, resource: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts oidc-provider on 127.0.0.1 with the client_credentials grant and resource indicators:
 * a token requested for a resource is an RS256 JWT whose `aud` is that resource, carrying the
 * client's claims.
 */
export async function startAuthorizationServer(
  clients: TestClient[],
): Promise<AuthorizationServer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-key-1';
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const http: Server = createServer();
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', () => ok()));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const byId = new Map(clients.map((c) => [c.id, c]));
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.id,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys: [jwk] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: 'mcp',
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) =>
      byId.get(token.clientId ?? '')?.claims,
  } as unknown as ConstructorParameters<typeof Provider>[1]);
  const handle = provider.callback();
  http.on('request', (req, res) => void handle(req, res));
  return {
    issuer,
    privateKey,
    kid,
    async token(client, resource) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'mcp' }),
      });
      const body = (await res.json()) as { access_token?: string; error_description?: string };
      if (!body.access_token)
        throw new Error(`the authorization server refused: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((ok) => {
        http.closeAllConnections();
        http.close(() => ok());
      }),
  };
}
