import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { FetchLike, Transport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { headersForOrigin } from '../../core/index.js';
import { ChildStdioTransport } from './child-stdio-transport.js';
import { dieWithGateway } from './die-with-gateway.js';
import type {
  ConnectionCredentials,
  LaunchedStdio,
  UpstreamConnectionOptions,
} from './connection-options.js';

/** The transport of one connection, and the prepared (sandboxed) spawn it runs, if any. */
interface UpstreamTransport {
  transport: Transport;
  launched: LaunchedStdio | null;
}

/**
 * Builds the transport to `o.transport`'s server, not yet started: a stdio process with the issued
 * environment, spawned as `o.launch` prepares it or else directly (dying with the gateway), or
 * Streamable HTTP through `o.fetch` (or the global fetch, never following a redirect) as
 * `wrapFetch` wraps it, without reconnection; each request gets the issued headers bound to its
 * exact origin (see {@link withBrokeredHeaders}).
 * @throws what `o.launch` throws; the connection's credentials are released first.
 */
export async function createTransport(
  options: UpstreamConnectionOptions,
  wrapFetch: (fetch: FetchLike) => FetchLike = (f) => f,
): Promise<UpstreamTransport> {
  const issued = options.credentials;
  const env = {
    ...(options.transport.type === 'stdio' ? options.transport.env : {}),
    ...issued?.env,
  };
  let launched: LaunchedStdio | null = null;
  if (options.transport.type === 'stdio' && options.launch) {
    try {
      launched = await options.launch(options.transport, env);
    } catch (err) {
      await issued?.release().catch(() => undefined);
      throw err;
    }
  }
  const transport = launched
    ? new ChildStdioTransport({
        ...launched.spawn,
        // Never the gateway's directory: a sandbox reads its bubblewrap's in /proc/1/cwd.
        cwd: '/',
        maxBufferSize: options.maxMessageBytes,
      })
    : options.transport.type === 'stdio'
      ? await unsandboxed(options.transport.command, options.transport.args, env, options)
      : new StreamableHTTPClientTransport(new URL(options.transport.url), {
          fetch: wrapFetch(withBrokeredHeaders(options.fetch?.fetch ?? fetch, issued?.headers)),
          reconnectionOptions: {
            maxReconnectionDelay: 1000,
            initialReconnectionDelay: 100,
            reconnectionDelayGrowFactor: 2,
            maxRetries: 0,
          },
        });
  return { transport, launched };
}

/**
 * A stdio server started outside the sandbox, as the SDK's StdioClientTransport would start it
 * (its default environment with `env` over it, the gateway's directory), dying with the gateway.
 */
async function unsandboxed(
  command: string,
  args: string[],
  env: Record<string, string>,
  options: UpstreamConnectionOptions,
): Promise<ChildStdioTransport> {
  const spawn = await dieWithGateway(command, args);
  return new ChildStdioTransport({
    file: spawn.command,
    args: spawn.args,
    env: { ...getDefaultEnvironment(), ...env },
    cwd: undefined,
    user: null,
    extraFds: [],
    maxBufferSize: options.maxMessageBytes,
  });
}

/** True when the transport runs a stdio server's process (so it has a pid and stderr). */
export function isStdio(transport: Transport): transport is ChildStdioTransport {
  return transport instanceof ChildStdioTransport;
}

/**
 * `fetch` adding to each request the issued headers bound to that request's exact origin (scheme,
 * host and port; a header bound to none goes to every request), chosen by the URL actually
 * fetched rather than the server's URL. Redirects are never followed (`manual`; a pinned fetch
 * never follows one either): a credential must not be carried to where a 3xx points.
 */
function withBrokeredHeaders(
  fetch: FetchLike,
  issued: ConnectionCredentials['headers'] = [],
): FetchLike {
  return (url, init) => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headersForOrigin(issued, url)))
      headers.set(name, value);
    return fetch(url, { ...init, headers, redirect: 'manual' });
  };
}
