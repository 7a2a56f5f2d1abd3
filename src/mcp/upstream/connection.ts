import {
  Client,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  ListPromptsResult,
  ListResourceTemplatesResult,
  ListResourcesResult,
  ReadResourceResult,
  Transport,
} from '@modelcontextprotocol/client';
import { Redactor, patternRedactor } from '../../secrets/index.js';
import type { BrokeredValue } from '../../secrets/index.js';
import type { DiscoveredTool } from '../mcp-binding.js';
import { describeError, failedCallOutcome, unsendable } from './call-outcome.js';
import type { UpstreamCallOutcome } from './call-outcome.js';
import { escalateExit } from './process-exit.js';
import { StderrTail } from './stderr-tail.js';
import type {
  LaunchedStdio,
  LoggingLevel,
  UpstreamConnectionOptions,
} from './connection-options.js';
import { discoverLists, listDiscoveredTools } from './discovery.js';
import type { DiscoveredLists } from './discovery.js';
import { createTransport, isStdio } from './transport.js';
import { MessageTooLarge, boundedFetch, isReadBufferOverflow } from './message-bound.js';
import { CallsInFlight, FORWARDING_CAPABILITIES } from './server-requests.js';
import type { ServerRequestHandler } from './server-requests.js';

/** A progress notification of a call, as the upstream sent it (its message redacted). */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * One MCP client session with an upstream server, over stdio (a child process on pipes, so it gets
 * EOF when Gatehouse goes) or Streamable HTTP. `close()` ends the session and makes sure a stdio
 * process is gone; it is safe to call twice.
 */
export class UpstreamConnection {
  private ended = false;
  private closing: Promise<void> | null = null;
  private readonly stderr = new StderrTail();
  private cachedRedactor: Redactor | undefined;
  private released = false;
  /** True once the handshake completed: only then is an end a loss to report. */
  private opened = false;
  /**
   * Where each call's progress goes, by the progress token Gatehouse gave it. Kept until the
   * call's answer has been taken: the SDK dispatches notifications a microtask late but drops its
   * own progress handler the moment the answer arrives, so the last progress notification, read
   * with the answer, would be lost.
   */
  private readonly progressOf = new Map<string, (p: CallProgress) => void>();
  private progressTokens = 0;
  /** Set when the upstream sent a message over the bound, which closed the connection. */
  private tooLarge: MessageTooLarge | null = null;

  private constructor(
    private readonly client: Client,
    private readonly transport: Transport,
    private readonly options: UpstreamConnectionOptions,
    private readonly launched: LaunchedStdio | null,
    private readonly inFlight: CallsInFlight,
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
  static async open(options: UpstreamConnectionOptions): Promise<UpstreamConnection> {
    // Over HTTP, what the server sends on a call's answer stream is known to be that call's.
    const inFlight = new CallsInFlight();
    // Each message of an HTTP answer is bounded as a stdio line is (see MessageTooLarge).
    let oversize = (): void => undefined;
    const { transport, launched } = await createTransport(options, (f) =>
      inFlight.fetch(
        boundedFetch(f, options.maxMessageBytes, () => oversize(), options.maxMessageBytesSetting),
      ),
    );
    const client = new Client(
      { name: 'gatehouse', version: '0.1.0' },
      { capabilities: FORWARDING_CAPABILITIES },
    );
    const c = new UpstreamConnection(client, transport, options, launched, inFlight);
    c.inFlight.install(client, (params) => c.redactor.redactJson(params).value);
    oversize = () => c.messageTooLarge();
    if (isStdio(transport)) {
      transport.stderr?.on('data', (chunk: Buffer) => c.stderr.append(chunk));
      transport.onerror = (err) => {
        if (isReadBufferOverflow(err)) c.messageTooLarge();
      };
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
      client.setNotificationHandler(method, () => options.onListChanged());
    }
    client.setNotificationHandler('notifications/message', (n) => {
      const { level, data, logger } = n.params;
      c.options.onNotice?.({
        kind: 'message',
        params: {
          level,
          data: c.redactor.redactJson(data).value,
          ...(logger !== undefined ? { logger } : {}),
        },
      });
    });
    client.setNotificationHandler('notifications/progress', (n) => {
      const { progressToken, progress, total, message } = n.params;
      c.progressOf.get(String(progressToken))?.({
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message: c.redact(message) } : {}),
      });
    });
    client.setNotificationHandler('notifications/resources/updated', (n) =>
      c.options.onNotice?.({ kind: 'resource-updated', uri: n.params.uri }),
    );
    client.onclose = () => c.end();
    try {
      await client.connect(transport, { timeout: options.connectTimeoutMs });
    } catch (err) {
      await c.close();
      // An HTTP error body can echo a rejected credential as well as stderr can.
      const why = c.tooLarge?.message ?? `${c.redact(describeError(err))}${c.stderrNote()}`;
      throw new Error(`MCP handshake failed: ${why}`, { cause: err });
    }
    c.opened = true;
    return c;
  }

  /** The credential values issued for this connection, for the sanitizer of its calls. */
  get secrets(): BrokeredValue[] {
    return this.options.credentials?.values ?? [];
  }

  /** The connection's redactor: its credential values and the known patterns, compiled once. */
  get redactor(): Redactor {
    this.cachedRedactor ??=
      this.secrets.length > 0 ? new Redactor(this.secrets) : patternRedactor();
    return this.cachedRedactor;
  }

  /** The stdio server's process id, or null (HTTP, or not running). */
  get pid(): number | null {
    return isStdio(this.transport) ? this.transport.pid : null;
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
  listTools(timeoutMs: number): Promise<DiscoveredTool[]> {
    return listDiscoveredTools(this.client, timeoutMs);
  }

  /** Tools, resources (and templates) and prompts. @throws Error on failure. */
  discover(timeoutMs: number): Promise<DiscoveredLists> {
    return discoverLists(this.client, timeoutMs);
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
    return this.tracked(() =>
      this.client.readResource({ uri }, { timeout: timeoutMs, cacheMode: 'bypass' }),
    );
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
    return this.tracked(() =>
      this.client.getPrompt({ name, ...(args ? { arguments: args } : {}) }, { timeout: timeoutMs }),
    );
  }

  /**
   * Completes a prompt's or resource template's argument; no values when the server does not
   * offer completions. @throws Error on failure or an upstream protocol error.
   */
  async complete(params: CompleteRequest['params'], timeoutMs: number): Promise<CompleteResult> {
    if (!this.client.getServerCapabilities()?.completions) return { completion: { values: [] } };
    return this.tracked(() => this.client.complete(params, { timeout: timeoutMs }));
  }

  /**
   * Asks the server to send log messages of `level` and above; nothing when it does not offer
   * logging. @throws Error on failure or an upstream protocol error.
   */
  async setLoggingLevel(level: LoggingLevel, timeoutMs: number): Promise<void> {
    if (!this.client.getServerCapabilities()?.logging) return;
    await this.client.setLoggingLevel(level, { timeout: timeoutMs });
  }

  /** True when the server lets clients subscribe to its resources' updates. */
  get offersSubscriptions(): boolean {
    return this.client.getServerCapabilities()?.resources?.subscribe === true;
  }

  /** Subscribes to (or, `on` false, unsubscribes from) a resource's updates. @throws Error. */
  async subscribeResource(uri: string, on: boolean, timeoutMs: number): Promise<void> {
    if (on) await this.client.subscribeResource({ uri }, { timeout: timeoutMs });
    else await this.client.unsubscribeResource({ uri }, { timeout: timeoutMs });
  }

  /**
   * Calls a tool. Never throws: says whether the request was sent and whether an answer came.
   * Timeout and abort cancel the request upstream (`notifications/cancelled`). With `onProgress`
   * the request carries a progress token and the server's progress notifications reach it. With
   * `onRequest`, the server's sampling and elicitation requests of this call (on its own answer
   * stream over HTTP; while it is the only call in flight over stdio) are answered by it (see
   * {@link CallsInFlight}).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      timeoutMs: number;
      signal: AbortSignal;
      onProgress?: (p: CallProgress) => void;
      onRequest?: ServerRequestHandler;
    },
  ): Promise<UpstreamCallOutcome> {
    const unsent = unsendable(options.signal, this.isClosed);
    if (unsent) return unsent;
    const token = options.onProgress ? `gatehouse-${++this.progressTokens}` : undefined;
    if (token) this.progressOf.set(token, options.onProgress!);
    try {
      const result = await this.inFlight.within(options.onRequest, () =>
        this.client.callTool(
          { name, arguments: args, ...(token ? { _meta: { progressToken: token } } : {}) },
          { timeout: options.timeoutMs, signal: options.signal },
        ),
      );
      return { kind: 'result', result };
    } catch (err) {
      return failedCallOutcome(err, {
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        isClosed: () => this.isClosed,
        stderrNote: () => this.stderrNote(),
        tooLarge: () => this.tooLarge,
      });
    } finally {
      if (token) this.progressOf.delete(token);
    }
  }

  /**
   * Runs an agent's request (a read, a prompt, a completion) as one in flight: a sampling or
   * elicitation request the server sends meanwhile may be this one's, so it is forwarded to no
   * tool call's caller (see {@link CallsInFlight}); it is refused.
   */
  private tracked<T>(request: () => Promise<T>): Promise<T> {
    return this.inFlight.within(undefined, request);
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
    await escalateExit(pid);
    await Promise.race([graceful, new Promise((r) => setTimeout(r, 100))]);
    await this.release();
  }

  /**
   * The upstream sent a message over the bound: the connection is closed (its calls in flight end
   * saying why) and, once it was open, reported lost so the pool reconnects for the next call.
   */
  private messageTooLarge(): void {
    if (this.tooLarge || this.isClosed) return;
    this.tooLarge = new MessageTooLarge(
      this.options.maxMessageBytes,
      this.options.maxMessageBytesSetting,
    );
    void this.close();
    if (this.opened) this.options.onClosed();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.closing) {
      void this.release();
      // A server that dies during the handshake is a failed open (`open` throws), not a loss.
      if (this.opened) this.options.onClosed();
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
      this.options.onTransportError?.(err);
      return;
    }
    void this.close();
    this.options.onClosed();
  }

  /** Ends the connection's credential leases, once. */
  private async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.options.credentials?.release().catch(() => undefined);
    await this.launched?.release().catch(() => undefined);
    this.options.fetch?.close();
  }

  /** The stdio server's stderr note, without this connection's credentials (see `StderrTail`). */
  private stderrNote(): string {
    return this.stderr.note((text) => this.redact(text));
  }

  /** The text without this connection's credential values and known secret shapes. */
  private redact(text: string): string {
    return this.redactor.redactText(text).text;
  }
}
