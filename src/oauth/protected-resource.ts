/** The RFC 9728 path of a resource's metadata; `/mcp` has its own under it. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/**
 * This gateway's protected resource metadata (RFC 9728): its resource identifier, the
 * authorization server that issues its tokens, and how they are presented.
 */
export function protectedResourceMetadata(
  resource: string,
  issuer: string,
): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    resource_name: 'Gatehouse',
  };
}

/** The `WWW-Authenticate` value of a 401: where a client finds the metadata. */
export function bearerChallenge(resource: string): string {
  return `Bearer resource_metadata="${resource.replace(/\/$/, '')}${PROTECTED_RESOURCE_PATH}"`;
}
