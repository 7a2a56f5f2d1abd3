import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { join } from 'node:path';
import { usageError } from '../cli-error.js';

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError('give a port number in 0–65535.');
  return Number(value);
}

function count(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError('give a whole number.');
  return Number(value);
}

/** `gatehouse serve`: runs the gateway until SIGINT or SIGTERM. */
export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('run the gateway (SQLite in the data directory by default)')
    .option('--demo', 'seed a demo tenant, tools, agent and one principal per role')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (default 7070)', port)
    .option('--data <dir>', 'data directory (default .data or GATEHOUSE_DATA)')
    .option(
      '--db <url>',
      'database: postgres://… (PostgreSQL, shared by nodes), sqlite:PATH or a path (default DATA/gatehouse.db; GATEHOUSE_DB)',
    )
    .option(
      '--request-timeout-ms <ms>',
      "time for a request's headers and body to arrive (default 30000; GATEHOUSE_REQUEST_TIMEOUT_MS)",
      count,
    )
    .option(
      '--headers-timeout-ms <ms>',
      "time for a request's headers to arrive (default 10000; GATEHOUSE_HEADERS_TIMEOUT_MS)",
      count,
    )
    .option(
      '--keep-alive-timeout-ms <ms>',
      'idle time before a keep-alive connection is closed (default 5000; GATEHOUSE_KEEP_ALIVE_TIMEOUT_MS)',
      count,
    )
    .option(
      '--max-connections <n>',
      'open connections at most (default 512; GATEHOUSE_MAX_CONNECTIONS)',
      count,
    )
    .option(
      '--max-stream-clients <n>',
      'open event streams at most (default 256; GATEHOUSE_STREAM_MAX_CLIENTS)',
      count,
    )
    .option(
      '--public-url <url>',
      'the URL clients reach the gateway at, e.g. through a reverse proxy; /mcp accepts its host and origin (GATEHOUSE_PUBLIC_URL)',
    )
    .option(
      '--allowed-hosts <hosts>',
      'more host names /mcp accepts, comma-separated: name (any port) or name:port (GATEHOUSE_ALLOWED_HOSTS)',
    )
    .option(
      '--allowed-origins <origins>',
      'browser origins /mcp accepts, comma-separated, e.g. https://app.example.com (GATEHOUSE_ALLOWED_ORIGINS)',
    )
    .option(
      '--trusted-proxies <addresses>',
      'reverse proxies whose X-Forwarded-* headers are believed: IPs, CIDR ranges, loopback (GATEHOUSE_TRUSTED_PROXIES)',
    )
    .option(
      '--tls-cert <file>',
      'serve HTTPS with this PEM certificate chain (with --tls-key; reloaded on SIGHUP; GATEHOUSE_TLS_CERT)',
    )
    .option('--tls-key <file>', 'the PEM private key of --tls-cert (GATEHOUSE_TLS_KEY)')
    .action(
      async (opts: {
        demo?: boolean;
        host?: string;
        port?: number;
        data?: string;
        db?: string;
        requestTimeoutMs?: number;
        headersTimeoutMs?: number;
        keepAliveTimeoutMs?: number;
        maxConnections?: number;
        maxStreamClients?: number;
        publicUrl?: string;
        allowedHosts?: string;
        allowedOrigins?: string;
        trustedProxies?: string;
        tlsCert?: string;
        tlsKey?: string;
      }) => {
        // A descriptor whoever started us left open must not reach the sandboxes (bubblewrap
        // passes on what it inherits), nor the MCP servers and browsers the gateway starts.
        const { closeInheritedDescriptors } = await import('../../sandbox/index.js');
        closeInheritedDescriptors();
        // Loaded here, not at the top: client commands never pay for the server's start-up.
        const { loadConfig, startGateway } = await import('../../app/index.js');
        let config: ReturnType<typeof loadConfig>;
        try {
          config = loadConfig({
            demo: opts.demo ?? false,
            ...(opts.host ? { host: opts.host } : {}),
            ...(opts.port !== undefined ? { port: opts.port } : {}),
            ...(opts.data ? { dataDir: opts.data } : {}),
            ...(opts.db ? { db: opts.db } : {}),
            limits: defined({
              requestTimeoutMs: opts.requestTimeoutMs,
              headersTimeoutMs: opts.headersTimeoutMs,
              keepAliveTimeoutMs: opts.keepAliveTimeoutMs,
              maxConnections: opts.maxConnections,
            }),
            streams: defined({ maxClients: opts.maxStreamClients }),
            reach: {
              ...(opts.publicUrl !== undefined ? { publicUrl: opts.publicUrl } : {}),
              ...(opts.allowedHosts !== undefined ? { allowedHosts: opts.allowedHosts } : {}),
              ...(opts.allowedOrigins !== undefined ? { allowedOrigins: opts.allowedOrigins } : {}),
              ...(opts.trustedProxies !== undefined ? { trustedProxies: opts.trustedProxies } : {}),
            },
            tls: {
              ...(opts.tlsCert !== undefined ? { cert: opts.tlsCert } : {}),
              ...(opts.tlsKey !== undefined ? { key: opts.tlsKey } : {}),
            },
          });
        } catch (err) {
          // A flag or GATEHOUSE_* variable that cannot be used: the command line is wrong.
          throw usageError((err as Error).message, err);
        }
        const { gateway, url, tokens } = await startGateway(config);
        const out = process.stdout;
        out.write(`Gatehouse listening on ${url} (data in ${config.dataDir})\n`);
        if (config.reach.publicUrl !== null)
          out.write(`Public URL ${config.reach.publicUrl} (agents' MCP endpoint: /mcp)\n`);
        if (gateway.recovered.length > 0) {
          out.write(
            `${gateway.recovered.length} invocation(s) were running when Gatehouse stopped; they are now uncertain (GET /v1/invocations?status=uncertain).\n`,
          );
        }
        if (tokens) {
          out.write(`Demo tenant acme, project web, environments dev, prod, freeze (frozen).\n`);
          out.write(`Demo tokens in ${join(config.dataDir, 'demo-tokens.json')}; try:\n`);
          out.write(
            `  export GATEHOUSE_URL=${url} GATEHOUSE_TOKEN=$(node -p "require('${join(config.dataDir, 'demo-tokens.json')}').agent")\n`,
          );
          out.write(`  npx gatehouse invoke demo/echo@1.0.0 --input '{"message":"hello"}'\n`);
        }
        const stop = () => {
          out.write('stopping…\n');
          void gateway.close().then(() => process.exit(0));
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        if (config.tls) {
          // A renewed certificate is served to new connections without a restart.
          process.on('SIGHUP', () => {
            try {
              gateway.reloadTls();
              out.write(`TLS certificate reloaded from ${config.tls!.certFile}\n`);
            } catch (err) {
              process.stderr.write(
                `TLS certificate not reloaded, the old one stays: ${(err as Error).message}\n`,
              );
            }
          });
        }
      },
    );
}

/** The entries of `o` that are set. */
function defined<T extends Record<string, number | undefined>>(
  o: T,
): Partial<Record<keyof T, number>> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<
    Record<keyof T, number>
  >;
}
