import {
  Client,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type {
  CallToolResult,
  GetPromptResult,
  ListPromptsResult,
  ListResourceTemplatesResult,
  ListResourcesResult,
  ReadResourceResult,
  Transport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Redactor } from '../secrets/index.js';
import type { BrokeredValue } from '../secrets/index.js';
import type { McpTransport } from './mcp-server.js';
import { ChildStdioTransport } from './child-stdio-transport.js';
import { dieWithGateway } from './die-with-gateway.js';
import type { ChildStdioOptions } from './child-stdio-transport.js';
import { toolDigest, upstreamTool } from './tool-digest.js';
import type { DiscoveredTool } from './mcp-binding.js';
import type { UpstreamFetch } from './upstream-fetch.js';

/** Options of {@link UpstreamConnection.open}. */
export interface UpstreamConnectionOptions {
  transport: McpTransport;
  /** Called when the server says its tools, resources or prompts changed. */
  onListChanged: () => void;
  /**
   * Called once when an open connection ends other than by `close()`: the process died, the peer
   * hung up, the HTTP server said the session is gone. Not for a connection whose handshake never
   * completed (`open` throws then).
   */
  onClosed: () => void;
  /**
   * Called when a request or stream of an open HTTP connection failed (refused, reset, an HTTP
   * error, the server's event stream ended) and the connection stays open: the server may be gone
   * or one request may have failed; a probe decides. Not during the handshake or after `close()`.
   */
  onTransportError?: (err: unknown) => void;
  /** Milliseconds the handshake may take. */
  connectTimeoutMs: number;
  /** Largest single message accepted from a stdio server; a bigger one ends the connection. */
  maxMessageBytes: number;
  /** Credentials issued for this connection (hold values: never log or store them). */
  credentials?: ConnectionCredentials;
  /**
   * Prepares a stdio server's process elsewhere (a sandbox lease): given the command and its whole
   * environment, the spawn to make and what to release when the process is gone. Null: spawn it
   * directly, as the gateway's user.
   */
  launch?: StdioLauncher;
  /**
   * The fetch an HTTP server's requests go through (one the egress check pinned to the addresses
   * it authorized); the connection owns it and closes it when it ends. Absent: the global fetch.
   */
  fetch?: UpstreamFetch;
}

/** A prepared spawn of a stdio server, and how to give back what it holds. */
export interface LaunchedStdio {
  spawn: Omit<ChildStdioOptions, 'maxBufferSize'>;
  /** Called once when the process is gone (release the lease, remove the workspace). */
  release: () => Promise<void>;
}

/** Prepares the spawn of a stdio server; null when it runs directly. */
export type StdioLauncher = (
  transport: Extract<McpTransport, { type: 'stdio' }>,
  env: Record<string, string>,
) => Promise<LaunchedStdio | null>;

/** What the broker issued for one connection, and how to end those leases. */
export interface ConnectionCredentials {
  /** Environment variables added to a stdio server's process. */
  env: Record<string, string>;
  /** Headers added to an HTTP server's requests; `host` absent means every request. */
  headers: { host?: string; name: string; value: string }[];
  /** Every issued value, for the sanitizer of calls through this connection. */
  values: BrokeredValue[];
  /** Ends the leases; called once when the connection is over, however it ended. */
  release: () => Promise<void>;
}

/** What a call to an upstream tool came to. */
export type UpstreamCallOutcome =
  | { kind: 'result'; result: CallToolResult }
  /** Nothing was sent: the upstream cannot have acted. */
  | { kind: 'not-sent'; code: string; message: string }
  /** The request was sent and no answer came (timeout, abort, connection lost). */
  | { kind: 'no-answer'; code: string; message: string }
  /** The upstream answered with a protocol error: it refused the request. */
  | { kind: 'refused'; code: string; message: string };

/** What discovery lists: tools with digests, resources and prompts. */
export interface DiscoveredLists {
  tools: DiscoveredTool[];
  resources: { uri: string; name: string }[];
  prompts: { name: string; description?: string }[];
}

const STDERR_TAIL = 4096;

/**
 * One MCP client session with an upstream server, over stdio (a child process on pipes, so it gets
 * EOF when Gatehouse goes) or Streamable HTTP. `close()` ends the session and makes sure a stdio
 * process is gone; it is safe to call twice.
 */
export class UpstreamConnection {
  private ended = false;
  private closing: Promise<void> | null = null;
  private stderrTail = '';
  /** True once the tail dropped the start of stderr (so its first line is partial). */
  private stderrCut = false;
  private released = false;
  /** True once the handshake completed: only then is an end a loss to report. */
  private opened = false;

  private constructor(
    private readonly client: Client,
    private readonly transport: Transport,
    private readonly o: UpstreamConnectionOptions,
    private readonly launched: LaunchedStdio | null = null,
  ) {}

  /** True when the stdio server runs in a prepared (sandboxed) process. */
  get sandboxed(): boolean {
    return this.launched !== null;
  }

  /**
   * Starts the transport and runs the handshake.
   * @throws Error when the server cannot be started or reached or the handshake fails; nothing is
   *   left running then.
   */
  static async open(o: UpstreamConnectionOptions): Promise<UpstreamConnection> {
    const issued = o.credentials;
    const env = { ...(o.transport.type === 'stdio' ? o.transport.env : {}), ...issued?.env };
    let launched: LaunchedStdio | null = null;
    if (o.transport.type === 'stdio' && o.launch) {
      try {
        launched = await o.launch(o.transport, env);
      } catch (err) {
        await issued?.release().catch(() => undefined);
        throw err;
      }
    }
    const transport = launched
      ? new ChildStdioTransport({ ...launched.spawn, maxBufferSize: o.maxMessageBytes })
      : o.transport.type === 'stdio'
        ? new StdioClientTransport({
            ...dieWithGateway(o.transport.command, o.transport.args),
            ...(Object.keys(env).length > 0 ? { env } : {}),
            stderr: 'pipe',
            maxBufferSize: o.maxMessageBytes,
          })
        : new StreamableHTTPClientTransport(new URL(o.transport.url), {
            requestInit: { headers: headersFor(new URL(o.transport.url), issued?.headers ?? []) },
            ...(o.fetch ? { fetch: o.fetch.fetch } : {}),
            reconnectionOptions: {
              maxReconnectionDelay: 1000,
              initialReconnectionDelay: 100,
              reconnectionDelayGrowFactor: 2,
              maxRetries: 0,
            },
          });
    const client = new Client({ name: 'gatehouse', version: '0.1.0' }, { capabilities: {} });
    const c = new UpstreamConnection(client, transport, o, launched);
    if (transport instanceof StdioClientTransport || transport instanceof ChildStdioTransport) {
      transport.stderr?.on('data', (chunk: Buffer) => {
        const tail = c.stderrTail + chunk.toString('utf8');
        c.stderrCut ||= tail.length > STDERR_TAIL;
        c.stderrTail = tail.slice(-STDERR_TAIL);
      });
    }
    // The SDK keeps a handler set before connect() and calls it first; with no reconnection
    // (`maxRetries: 0`) a dropped HTTP stream surfaces here, never through onclose.
    if (transport instanceof StreamableHTTPClientTransport)
      transport.onerror = (err) => c.transportFailed(err);
    for (const method of [
      'notifications/tools/list_changed',
      'notifications/resources/list_changed',
      'notifications/prompts/list_changed',
    ] as const) {
      client.setNotificationHandler(method, () => o.onListChanged());
    }
    client.onclose = () => c.end();
    try {
      await client.connect(transport, { timeout: o.connectTimeoutMs });
    } catch (err) {
      await c.close();
      // An HTTP error body can echo a rejected credential as well as stderr can.
      const why = `${c.redact(describe(err))}${c.stderrNote()}`;
      throw new Error(`MCP handshake failed: ${why}`, { cause: err });
    }
    c.opened = true;
    return c;
  }

  /** The credential values issued for this connection, for the sanitizer of its calls. */
  get secrets(): BrokeredValue[] {
    return this.o.credentials?.values ?? [];
  }

  /** The stdio server's process id, or null (HTTP, or not running). */
  get pid(): number | null {
    return this.transport instanceof StdioClientTransport ||
      this.transport instanceof ChildStdioTransport
      ? this.transport.pid
      : null;
  }

  /** True once the session has ended. */
  get isClosed(): boolean {
    return this.ended || this.closing !== null;
  }

  /** The protocol revision agreed in the handshake. */
  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion();
  }

  /** A ping. @throws Error when no answer comes within `timeoutMs`. */
  async ping(timeoutMs: number): Promise<void> {
    await this.client.ping({ timeout: timeoutMs });
  }

  /** The server's tools with their digests, fetched fresh. @throws Error on failure. */
  async listTools(timeoutMs: number): Promise<DiscoveredTool[]> {
    const { tools } = await this.client.listTools(undefined, {
      timeout: timeoutMs,
      cacheMode: 'refresh',
    });
    return tools.map((t) => {
      const tool = upstreamTool(t);
      return { tool, digest: toolDigest(tool) };
    });
  }

  /** Tools, resources (and templates) and prompts. @throws Error on failure. */
  async discover(timeoutMs: number): Promise<DiscoveredLists> {
    const tools = await this.listTools(timeoutMs);
    const caps = this.client.getServerCapabilities() ?? {};
    const resources: DiscoveredLists['resources'] = [];
    if (caps.resources) {
      const r = await this.client.listResources(undefined, { timeout: timeoutMs });
      resources.push(...r.resources.map((x) => ({ uri: x.uri, name: x.name })));
      const t = await this.client.listResourceTemplates(undefined, { timeout: timeoutMs });
      resources.push(...t.resourceTemplates.map((x) => ({ uri: x.uriTemplate, name: x.name })));
    }
    const prompts: DiscoveredLists['prompts'] = [];
    if (caps.prompts) {
      const p = await this.client.listPrompts(undefined, { timeout: timeoutMs });
      prompts.push(
        ...p.prompts.map((x) =>
          x.description === undefined
            ? { name: x.name }
            : { name: x.name, description: x.description },
        ),
      );
    }
    return { tools, resources, prompts };
  }

  /** The server's resources (every page); empty when it has no resources capability. */
  async listResources(timeoutMs: number): Promise<ListResourcesResult['resources']> {
    if (!this.client.getServerCapabilities()?.resources) return [];
    return (await this.client.listResources(undefined, { timeout: timeoutMs })).resources;
  }

  /** The server's resource templates (every page); empty without a resources capability. */
  async listResourceTemplates(
    timeoutMs: number,
  ): Promise<ListResourceTemplatesResult['resourceTemplates']> {
    if (!this.client.getServerCapabilities()?.resources) return [];
    return (await this.client.listResourceTemplates(undefined, { timeout: timeoutMs }))
      .resourceTemplates;
  }

  /** Reads one resource, fresh. @throws Error on failure or an upstream protocol error. */
  readResource(uri: string, timeoutMs: number): Promise<ReadResourceResult> {
    return this.client.readResource({ uri }, { timeout: timeoutMs, cacheMode: 'bypass' });
  }

  /** The server's prompts (every page); empty when it has no prompts capability. */
  async listPrompts(timeoutMs: number): Promise<ListPromptsResult['prompts']> {
    if (!this.client.getServerCapabilities()?.prompts) return [];
    return (await this.client.listPrompts(undefined, { timeout: timeoutMs })).prompts;
  }

  /** Gets one prompt with its arguments. @throws Error on failure or an upstream protocol error. */
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    timeoutMs: number,
  ): Promise<GetPromptResult> {
    return this.client.getPrompt(
      { name, ...(args ? { arguments: args } : {}) },
      { timeout: timeoutMs },
    );
  }

  /**
   * Calls a tool. Never throws: says whether the request was sent and whether an answer came.
   * Timeout and abort cancel the request upstream (`notifications/cancelled`).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    o: { timeoutMs: number; signal: AbortSignal },
  ): Promise<UpstreamCallOutcome> {
    if (o.signal.aborted)
      return {
        kind: 'not-sent',
        code: 'ABORTED',
        message: 'the call was aborted before it was sent',
      };
    if (this.isClosed)
      return { kind: 'not-sent', code: 'NOT_CONNECTED', message: 'the upstream is not connected' };
    try {
      const result = await this.client.callTool(
        { name, arguments: args },
        { timeout: o.timeoutMs, signal: o.signal },
      );
      return { kind: 'result', result };
    } catch (err) {
      if (err instanceof SdkError) {
        switch (err.code) {
          case SdkErrorCode.NotConnected:
          case SdkErrorCode.SendFailed:
            return { kind: 'not-sent', code: 'NOT_CONNECTED', message: err.message };
          case SdkErrorCode.RequestTimeout:
            return {
              kind: 'no-answer',
              code: 'TIMEOUT',
              message: `the upstream did not answer within ${o.timeoutMs} ms`,
            };
          case SdkErrorCode.ConnectionClosed:
            return {
              kind: 'no-answer',
              code: 'CONNECTION_LOST',
              message: `the connection to the upstream was lost during the call${this.stderrNote()}`,
            };
          default:
            return { kind: 'no-answer', code: 'UPSTREAM_ERROR', message: err.message };
        }
      }
      if (o.signal.aborted)
        return {
          kind: 'no-answer',
          code: 'ABORTED',
          message: 'the call was aborted after it was sent',
        };
      if (isProtocolError(err))
        return { kind: 'refused', code: 'UPSTREAM_REFUSED', message: describe(err) };
      if (this.isClosed)
        return { kind: 'no-answer', code: 'CONNECTION_LOST', message: describe(err) };
      return { kind: 'no-answer', code: 'UPSTREAM_ERROR', message: describe(err) };
    }
  }

  /** Ends the session; a stdio process gets EOF, then SIGTERM, then SIGKILL. Safe to repeat. */
  close(): Promise<void> {
    if (!this.closing) this.closing = this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const pid = this.pid;
    const graceful = this.client.close().catch(() => undefined);
    if (pid === null) {
      await graceful;
      await this.release();
      return;
    }
    const exited = waitForExit(pid, 5000);
    const term = setTimeout(() => signal(pid, 'SIGTERM'), 250);
    const kill = setTimeout(() => signal(pid, 'SIGKILL'), 1500);
    await exited;
    clearTimeout(term);
    clearTimeout(kill);
    await Promise.race([graceful, new Promise((r) => setTimeout(r, 100))]);
    await this.release();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.closing) {
      void this.release();
      // A server that dies during the handshake is a failed open (`open` throws), not a loss.
      if (this.opened) this.o.onClosed();
    }
  }

  /**
   * An error of the HTTP transport. A 404 to a message POSTed with the session id is the server
   * saying the session is gone (the spec's signal to start a new one): the connection is closed
   * and the loss reported, so the pool reconnects. (Not a 404 to the GET of the event stream:
   * servers without one often answer so.) Any other failure may be one request's (a 4xx for one
   * call) or the server's: it is reported for a probe to decide, and the connection, with the
   * calls in flight on it, stays.
   */
  private transportFailed(err: unknown): void {
    if (!this.opened || this.isClosed) return;
    const sessionGone =
      err instanceof SdkHttpError &&
      err.code === SdkErrorCode.ClientHttpNotImplemented &&
      err.status === 404 &&
      this.transport instanceof StreamableHTTPClientTransport &&
      this.transport.sessionId !== undefined;
    if (!sessionGone) {
      this.o.onTransportError?.(err);
      return;
    }
    void this.close();
    this.o.onClosed();
  }

  /** Ends the connection's credential leases, once. */
  private async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.o.credentials?.release().catch(() => undefined);
    await this.launched?.release().catch(() => undefined);
    this.o.fetch?.close();
  }

  /**
   * What the server said on stderr: its first line naming an error, else its last lines, with the
   * connection's credential values and known secret shapes redacted (servers echo a rejected
   * token in exactly such lines, and the note reaches errors, state reasons and the audit).
   */
  private stderrNote(): string {
    // A line cut by the tail could hold the end of a secret no pattern recognizes any more.
    let tail = this.stderrTail;
    if (this.stderrCut) tail = tail.includes('\n') ? tail.slice(tail.indexOf('\n') + 1) : '';
    const lines = tail
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && l !== '^' && l !== '}' && l !== '{');
    const telling = lines.find((l) => /\b(error|exception|fatal|cannot|denied)\b/i.test(l));
    const shown = telling ? [telling] : lines.slice(-3);
    const text = this.redact(shown.join(' | '));
    return text ? ` (stderr: ${text.slice(0, 500)})` : '';
  }

  /** The text without this connection's credential values and known secret shapes. */
  private redact(text: string): string {
    return new Redactor(this.secrets).redactText(text).text;
  }
}

/** The issued headers meant for `url`'s host (a header without a host goes to every request). */
function headersFor(url: URL, headers: ConnectionCredentials['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of headers)
    if (h.host === undefined || h.host === url.hostname) out[h.name] = h.value;
  return out;
}

function isProtocolError(err: unknown): boolean {
  return typeof (err as { code?: unknown } | null)?.code === 'number';
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** True while a process with this id exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  while (processAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}
