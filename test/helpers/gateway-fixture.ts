import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, openDemo } from '../../src/app/index.js';
import type {
  ConfigFlags,
  DemoTokens,
  Gateway,
  GatewayConfig,
  GatewayDeps,
} from '../../src/app/index.js';
import type { SandboxConfig } from '../../src/app/sandbox-config.js';
import type { PoolConfig } from '../../src/capacity/index.js';
import type { Clock } from '../../src/core/index.js';
import type { NativeHandler } from '../../src/executors/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { databaseFor } from './test-backend.js';
import { unmountUnder } from './tmpfs.js';

/** The native executor handed to `GatewayDeps.nativeHandlers`. */
export type NativeRegistry = Parameters<NonNullable<GatewayDeps['nativeHandlers']>>[0];

/** One in-process HTTP request. */
export interface InjectOptions {
  /** Bearer token; omitted means no Authorization header. */
  token?: string;
  /** A JSON body (serialized here). */
  body?: unknown;
  /** A raw body sent as is, with Content-Type application/json unless headers say otherwise. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** An answer, its body parsed as JSON when it is JSON. */
export interface InjectAnswer<T = unknown> {
  status: number;
  body: T;
  headers: Record<string, unknown>;
}

/** The REST API's error body (DESIGN §9). */
export interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/**
 * What `POST /v1/invocations` answers: the invocation record, or an error body when the request
 * was refused before it became an invocation (both carry `error.code`).
 */
export type InvokeAnswer = InjectAnswer<InvocationRecord>;

/** A demo gateway on a fresh temporary data directory. */
export interface DemoGateway {
  gateway: Gateway;
  tokens: DemoTokens;
  dataDir: string;
  /** Where the gateway keeps workspaces, egress sockets and the demo repository. */
  sandboxRoot: string;
  /** The base URL (`http://127.0.0.1:PORT`) when started with `listen: true`. */
  url?: string;
  /** How many times the native handler `name` (e.g. `demo.propose-change`) has been entered. */
  executions(name: string): number;
  /** Sends one request to the gateway in process (`server.inject`), no socket involved. */
  inject<T = unknown>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    o?: InjectOptions,
  ): Promise<InjectAnswer<T>>;
  /** `POST /v1/invocations` as `token` with `Idempotency-Key: key`. */
  invoke(token: string, key: string, body: unknown): Promise<InvokeAnswer>;
  /** Closes the gateway, keeping the data directory. Safe to call twice. */
  stop(): Promise<void>;
  /** Closes the gateway and deletes the data directory. Safe to call twice. */
  close(): Promise<void>;
}

/** Options of {@link startDemoGateway}. */
export interface DemoGatewayOptions {
  /** Configuration beyond the defaults (data dir, port 0, demo). */
  config?: ConfigFlags;
  /** Handlers registered after the demo's own. */
  nativeHandlers?: (native: NativeRegistry) => void;
  /** Reuse this data directory instead of making a fresh one. */
  dataDir?: string;
  /** The gateway's clock (default: the wall clock); a `ManualClock` makes expiry exact. */
  clock?: Clock;
  /** Also listen on a real socket (port 0), for clients that need one (the event stream). */
  listen?: boolean;
  /**
   * Sandbox settings laid over the defaults field by field (`pool` too), unlike
   * `config.sandbox`, which replaces them whole.
   */
  sandbox?: Partial<Omit<SandboxConfig, 'pool'>> & { pool?: Partial<PoolConfig> };
  /** The gateway's log (default none: `logLevel` silent unless `config` names one). */
  logger?: GatewayDeps['logger'];
  /**
   * `sqlite` keeps this gateway on `DATA/gatehouse.db` even when the run is switched to PostgreSQL
   * (test/helpers/test-backend.ts): for tests about the SQLite file itself.
   */
  backend?: 'sqlite';
}

/**
 * Opens a real gateway (SQLite file, Cedar, signing keys on disk) seeded with the demo tenant
 * `acme`, and returns it with the demo tokens and an in-process request helper.
 */
export async function startDemoGateway(o: DemoGatewayOptions = {}): Promise<DemoGateway> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'gatehouse-e2e-'));
  const db = o.backend === 'sqlite' ? undefined : await databaseFor(dataDir);
  const config = loadConfig(
    { dataDir, port: 0, demo: true, logLevel: 'silent', ...(db ? { db } : {}), ...o.config },
    {},
  );
  if (o.sandbox) {
    const { pool, ...rest } = o.sandbox;
    config.sandbox = { ...config.sandbox, ...rest, pool: { ...config.sandbox.pool, ...pool } };
  }
  const root = sandboxRoot(config);
  const executions = new Map<string, number>();
  // As `gatehouse serve --demo` does: the demo's handlers, its ticket service and repository.
  const { gateway, tokens } = await openDemo(config, {
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
    nativeHandlers: (native) => {
      countExecutions(native, executions);
      o.nativeHandlers?.(native);
    },
  });
  let url: string | undefined;
  try {
    if (o.listen) url = await gateway.listen();
  } catch (err) {
    await gateway.close();
    throw err;
  }
  const inject = async <T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    io: InjectOptions = {},
  ): Promise<InjectAnswer<T>> => {
    const headers: Record<string, string> = { ...io.headers };
    if (io.token !== undefined) headers.authorization = `Bearer ${io.token}`;
    let payload: string | undefined;
    if (io.rawBody !== undefined) payload = io.rawBody;
    else if (io.body !== undefined) payload = JSON.stringify(io.body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    const res = await gateway.server.inject({
      method,
      url,
      headers,
      ...(payload !== undefined ? { payload } : {}),
    });
    let body: unknown = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, body: body as T, headers: res.headers };
  };
  let removed = false;
  return {
    gateway,
    tokens,
    dataDir,
    sandboxRoot: root,
    ...(url !== undefined ? { url } : {}),
    executions: (name) => executions.get(name) ?? 0,
    inject,
    invoke: (token, key, body) =>
      inject<InvocationRecord>('POST', '/v1/invocations', {
        token,
        body,
        headers: { 'idempotency-key': key },
      }),
    stop: () => gateway.close(),
    async close() {
      await gateway.close();
      if (!removed && o.dataDir === undefined) {
        unmountUnder(root);
        rmSync(dataDir, { recursive: true, force: true });
        if (root !== dataDir) rmSync(root, { recursive: true, force: true });
      }
      removed = true;
    },
  };
}

/**
 * Where a gateway keeps workspaces, egress sockets and the demo repository: `sandbox.root` where
 * the configuration has one, else the data directory.
 */
export function sandboxRoot(config: GatewayConfig): string {
  return (config.sandbox as { root?: string }).root ?? config.dataDir;
}

/** Wraps every handler registered from now on so its entries are counted in `counts`. */
function countExecutions(native: NativeRegistry, counts: Map<string, number>): void {
  const register = native.register.bind(native);
  native.register = (name: string, handler: NativeHandler) =>
    register(name, (input, ctx) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return handler(input, ctx);
    });
}

/** The body of `POST /v1/invocations` for a tool of the demo, version 1.0.0. */
export function call(tool: string, input: unknown, environment = 'dev'): unknown {
  return { tool: { id: tool, version: '1.0.0' }, input, environment };
}
