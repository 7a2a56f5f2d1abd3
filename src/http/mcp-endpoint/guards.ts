import type { FastifyRequest } from 'fastify';
import { ErrorCode, GatehouseError, IllegalStateError } from '../../core/index.js';
import type { Principal } from '../../tenancy/index.js';
import { accessOf } from '../access-table.js';
import { authorize } from '../access.js';
import type { Grant } from '../access.js';
import { bearerToken } from '../bearer.js';
import type { GatewayServices } from '../services.js';

/** Where `/mcp` may be reached from: names besides the local ones, and browser origins. */
export interface McpReach {
  /**
   * Host names accepted in `Host` (on the listening port) besides `localhost`, `127.0.0.1`,
   * `[::1]` and the address the request arrived on: the configured listen host, a DNS name.
   */
  allowedHosts?: string[];
  /** Origins accepted besides `http://<an accepted host>:<port>`. */
  allowedOrigins?: string[];
}

const JWT = /^eyJ[\w-]*\.[\w-]*\.[\w-]*$/;
const LOCAL_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** The `host:port` forms a request may name in `Host`, on the port it arrived at. */
function authorities(req: FastifyRequest, o: McpReach): Set<string> {
  const port = req.socket.localPort;
  const local = req.socket.localAddress?.replace(/^::ffff:/, '');
  const arrived = local === undefined ? [] : [local.includes(':') ? `[${local}]` : local];
  const names = [...LOCAL_NAMES, ...arrived, ...(o.allowedHosts ?? [])];
  return new Set(names.map((n) => `${n.toLowerCase()}:${port}`));
}

/** @throws GatehouseError FORBIDDEN when `Host` is not one this gateway serves (DNS rebinding). */
export function checkHost(req: FastifyRequest, o: McpReach): void {
  const host = req.headers.host?.toLowerCase();
  if (host === undefined || !authorities(req, o).has(host)) {
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      `Host ${JSON.stringify(req.headers.host ?? '')} is not a name this gateway serves /mcp under (DNS rebinding protection); add it to the allowed hosts.`,
    );
  }
}

/** @throws GatehouseError FORBIDDEN when a browser sent an Origin this gateway does not allow. */
export function checkOrigin(req: FastifyRequest, o: McpReach): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const allowed = new Set([
    ...[...authorities(req, o)].map((a) => `http://${a}`),
    ...(o.allowedOrigins ?? []),
  ]);
  if (!allowed.has(origin.toLowerCase())) {
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      `Origin ${JSON.stringify(origin)} may not call /mcp (DNS rebinding protection); add it to the allowed origins.`,
    );
  }
}

/**
 * The agent a bearer token belongs to, checked against the access table's entry for the request
 * (`POST /mcp`, `DELETE /mcp`). Tokens are opaque Gatehouse tokens; a JWT was issued for another
 * audience and is refused without being looked at.
 * @throws GatehouseError UNAUTHENTICATED (no, malformed, foreign, unknown, expired or revoked
 *   token), FORBIDDEN (not an agent, or an agent without a release).
 */
export function authenticateAgent(
  s: GatewayServices,
  method: string,
  header: string | undefined,
): { principal: Principal; grant: Grant } {
  // Longer than REST's 512, so that a JWT is recognized as one and told why it is refused.
  const token = bearerToken(header, 'agent token', 4096);
  if (JWT.test(token))
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      'This token is a JWT issued for another audience; /mcp accepts only Gatehouse agent tokens.',
    );
  const key = `${method} /mcp`;
  const access = accessOf(method, '/mcp');
  if (!access) throw new IllegalStateError(`${key} is not in the access table`);
  const authorized = authorize(s.directory, key, access, header, {
    noun: 'agent token',
    maxLength: 4096,
  });
  const p = authorized.principal;
  if (!p.agent || !p.project) {
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      '/mcp serves agent principals with a project and an agent release; this one has neither.',
    );
  }
  return authorized;
}
