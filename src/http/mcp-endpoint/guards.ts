import type { FastifyRequest } from 'fastify';
import { ErrorCode, GatehouseError, IllegalStateError } from '../../core/index.js';
import type { Principal } from '../../tenancy/index.js';
import { accessOf } from '../access-table.js';
import { authorize } from '../access.js';
import type { Grant } from '../access.js';
import { bearerToken, JWT } from '../bearer.js';
import type { GatewayServices } from '../services.js';

/** Where `/mcp` may be reached from: names besides the local ones, and browser origins. */
export interface McpReach {
  /**
   * Names accepted in `Host` on the listening port besides `localhost`, `127.0.0.1`, `[::1]` and
   * the address the request arrived on: the configured listen host.
   */
  listenHosts?: string[];
  /**
   * Hosts accepted as the request's host (`Host`, or `X-Forwarded-Host` from a trusted proxy),
   * lower case: `name` on any port (or none), or `name:port` on that port only. The public URL's
   * host is one.
   */
  allowedHosts?: string[];
  /**
   * Origins accepted besides the request's own (its scheme, host and port, once the host is
   * accepted) and `http://<a local name>:<port>`, lower case: the public URL's origin, a web app's.
   */
  allowedOrigins?: string[];
}

const LOCAL_NAMES = ['localhost', '127.0.0.1', '[::1]'];
/** What a refusal tells the operator to change. */
const HOW_TO_ALLOW =
  'set GATEHOUSE_PUBLIC_URL (serve --public-url) to the URL clients use, or add the host to GATEHOUSE_ALLOWED_HOSTS (--allowed-hosts)';

/** The `host:port` forms a request may name in `Host`, on the port it arrived at. */
function authorities(req: FastifyRequest, o: McpReach): Set<string> {
  const port = req.socket.localPort;
  const local = req.socket.localAddress?.replace(/^::ffff:/, '');
  const arrived = local === undefined ? [] : [local.includes(':') ? `[${local}]` : local];
  const names = [...LOCAL_NAMES, ...arrived, ...(o.listenHosts ?? [])];
  return new Set(names.map((n) => `${n.toLowerCase()}:${port}`));
}

/** `name` and `port` of a `Host` value (`[v6]:port`, `name:port`, `name`); port '' when none. */
function splitHost(host: string): { name: string; port: string } {
  const cut = host.startsWith('[') ? host.indexOf(']') + 1 : host.lastIndexOf(':');
  if (cut <= 0 || host[cut] !== ':') return { name: host, port: '' };
  return { name: host.slice(0, cut), port: host.slice(cut + 1) };
}

/** Whether `host` (lower case) is one this gateway serves `/mcp` under. */
function accepted(req: FastifyRequest, o: McpReach, host: string): boolean {
  if (authorities(req, o).has(host)) return true;
  const { name } = splitHost(host);
  return (o.allowedHosts ?? []).some((a) => a === host || a === name);
}

/** The request's host as the client named it: `Host`, or `X-Forwarded-Host` of a trusted proxy. */
function hostOf(req: FastifyRequest): { host: string; forwarded: boolean } {
  const host = req.host.toLowerCase();
  return { host, forwarded: host !== (req.headers.host ?? '').toLowerCase() };
}

/**
 * @throws GatehouseError FORBIDDEN when the request's host (`Host`, or `X-Forwarded-Host` from a
 *   trusted proxy) is not one this gateway serves (DNS rebinding).
 */
export function checkHost(req: FastifyRequest, o: McpReach): void {
  const { host, forwarded } = hostOf(req);
  if (host === '' || !accepted(req, o, host)) {
    const header = forwarded ? 'X-Forwarded-Host (from a trusted proxy)' : 'Host';
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      `${header} ${JSON.stringify(host)} is not a name this gateway serves /mcp under (DNS rebinding protection): ${HOW_TO_ALLOW}.`,
      { details: { reason: 'host-not-allowed' } },
    );
  }
}

/**
 * @throws GatehouseError FORBIDDEN when a browser sent an Origin this gateway does not allow. Call
 *   after {@link checkHost}: the request's own origin is accepted, so its host must be.
 */
export function checkOrigin(req: FastifyRequest, o: McpReach): void {
  const origin = req.headers.origin?.toLowerCase();
  if (origin === undefined) return;
  const allowed = new Set([
    `${req.protocol}://${hostOf(req).host}`,
    ...[...authorities(req, o)].map((a) => `http://${a}`),
    ...(o.allowedOrigins ?? []),
  ]);
  if (!allowed.has(origin)) {
    throw new GatehouseError(
      ErrorCode.FORBIDDEN,
      `Origin ${JSON.stringify(req.headers.origin)} may not call /mcp (DNS rebinding protection): add it to GATEHOUSE_ALLOWED_ORIGINS (serve --allowed-origins).`,
      { details: { reason: 'origin-not-allowed' } },
    );
  }
}

/**
 * The agent a bearer token belongs to, checked against the access table's entry for the request
 * (`POST /mcp`, `DELETE /mcp`): a Gatehouse agent token, or an OAuth access token (a JWT) when an
 * authorization server is configured; without one a JWT is refused without being looked at.
 * @throws GatehouseError UNAUTHENTICATED (no, malformed, foreign, unknown, expired or revoked
 *   token), FORBIDDEN (not an agent, or an agent without a release).
 */
export async function authenticateAgent(
  s: GatewayServices,
  method: string,
  header: string | undefined,
): Promise<{ principal: Principal; grant: Grant }> {
  // Longer than REST's 512, so that a JWT is recognized as one and told why it is refused.
  const token = bearerToken(header, 'agent token', 8192);
  if (!s.oauth && JWT.test(token))
    throw new GatehouseError(
      ErrorCode.UNAUTHENTICATED,
      'This token is a JWT, and this gateway has no OAuth authorization server configured; /mcp accepts only Gatehouse agent tokens.',
    );
  const key = `${method} /mcp`;
  const access = accessOf(method, '/mcp');
  if (!access) throw new IllegalStateError(`${key} is not in the access table`);
  const authorized = await authorize(s.directory, key, access, header, {
    noun: 'agent token',
    maxLength: 4096,
    ...(s.oauth ? { oauth: s.oauth } : {}),
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
