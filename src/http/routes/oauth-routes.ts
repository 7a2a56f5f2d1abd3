import { ErrorCode, GatehouseError } from '../../core/index.js';
import { PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from '../../oauth/index.js';
import type { Route } from '../route.js';
import type { GatewayServices } from '../services.js';

/**
 * The protected resource metadata (RFC 9728) MCP clients read after a 401 to find the
 * authorization server: at the well-known path, and under it for `/mcp` (where the MCP SDK looks
 * first). Public; 404 when no authorization server is configured.
 */
export function oauthRoutes(s: GatewayServices): Route[] {
  const metadata = () => {
    if (!s.oauth)
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        'This gateway takes Gatehouse tokens only: no OAuth authorization server is configured (GATEHOUSE_OAUTH_ISSUER).',
      );
    return { status: 200, body: protectedResourceMetadata(s.oauth.resource, s.oauth.issuer) };
  };
  return [PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}/mcp`].map((url) => ({
    method: 'GET',
    url,
    tag: 'operations',
    summary: `OAuth protected resource metadata (RFC 9728)${url.endsWith('/mcp') ? ' of /mcp' : ''}: the resource identifier and its authorization server`,
    responses: {
      '200': '{resource, authorization_servers: [issuer], bearer_methods_supported}',
      '404': 'no authorization server is configured',
    },
    handler: metadata,
  }));
}
