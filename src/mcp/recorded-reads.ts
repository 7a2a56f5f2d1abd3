import {
  ErrorCode,
  GatehouseError,
  canonicalBytes,
  canonicalDigest,
  cutText,
  isGatehouseError,
  isoTime,
  jsonValueProblem,
  sha256Hex,
} from '../core/index.js';
import type { AuditRecordDraft, Clock } from '../core/index.js';
import { patternRedactor } from '../secrets/index.js';
import type { Redactor } from '../secrets/index.js';
import type { Principal } from '../tenancy/index.js';
import type { McpService } from './mcp-service.js';
import type { UpstreamConnection } from './upstream/connection.js';

/**
 * Appends audit records to their tenants' logs through a store's transaction (the same path as
 * every other record: `appendLedger`), so the MCP endpoint can record what agents read and what
 * it refused.
 */
export interface AuditWriter {
  /** The time of the records. */
  clock: Clock;
  /**
   * Appends the records, each at the next index of its tenant's log, in one transaction. Not safe
   * to repeat: each call appends.
   * @throws whatever the store throws; nothing is written then.
   */
  append(records: AuditRecordDraft[]): Promise<void>;
}

/** What one `resources/read` or `prompts/get` came to. */
const ReadOutcome = {
  /** The upstream answered; the (redacted) answer went to the agent. */
  ok: 'ok',
  /** The request went to the upstream, which failed or refused it. */
  error: 'error',
  /** Gatehouse refused before any upstream was asked: the agent named what it may not reach. */
  refused: 'refused',
} as const;
type ReadOutcome = (typeof ReadOutcome)[keyof typeof ReadOutcome];

/** Why Gatehouse refused a read before asking an upstream. */
export const ReadRefusal = {
  /** `_meta["gatehouse/upstream"]` names a server the agent's closure does not reach. */
  serverNotReachable: 'server-not-reachable',
  /** No upstream the closure reaches lists the resource URI. */
  resourceNotListed: 'resource-not-listed',
  /** The prompt's `<server>__` prefix names no server the closure reaches. */
  promptNotReachable: 'prompt-not-reachable',
} as const;
export type ReadRefusal = (typeof ReadRefusal)[keyof typeof ReadRefusal];

/** The audit record types of the MCP endpoint's reads. */
export const ReadType = {
  resource: 'mcp.resource.read',
  prompt: 'mcp.prompt.get',
} as const;
export type ReadType = (typeof ReadType)[keyof typeof ReadType];

/** One read as the agent asked for it. */
export type ReadRequest =
  | { type: typeof ReadType.resource; sessionSha256: string | null; uri: string }
  | {
      type: typeof ReadType.prompt;
      /** The SHA-256 of the agent's session id (the id itself lets one use the session). */
      sessionSha256: string | null;
      /** As the agent named it: `<server>__<prompt>`. */
      name: string;
      /** The upstream's name of the prompt, once the server is known. */
      prompt?: string;
      arguments: Record<string, unknown> | undefined;
    };

/** Options of {@link RecordedReads}. */
export interface RecordedReadsOptions {
  mcp: McpService;
  writer: AuditWriter;
  principal: Principal;
}

/** Longest text (URI, prompt name) recorded whole; longer ones are cut and digested. */
const MAX_TEXT = 2048;

/**
 * The recorded side of the pass-through: every `resources/read` and `prompts/get` that reaches an
 * upstream becomes one audit record in the agent's tenant's log, and so does every request refused
 * because the agent named a server or resource its closure does not reach. The upstream's answer is
 * redacted like tool output (the connection's brokered credentials and known secret patterns) and
 * goes to the agent only once its record is written: an unrecorded read is never served.
 *
 * Records are `mcp.resource.read` / `mcp.prompt.get`, subject `mcp-server/<id>` (or
 * `principal/<agent principal>` when the agent named no server of its tenant), actor the agent
 * principal, and data `{serverId, agent, sessionSha256, outcome, …}`: the URI or prompt name; for
 * prompts the SHA-256 of the JCS of the arguments, never the values (they may be large or hold
 * secrets, and the log cannot forget); on `ok` the byte size and SHA-256 of the JCS of the answer
 * as returned without its `_meta`, and the kinds of secrets removed; otherwise the error `code`
 * (and the refusal `reason`).
 */
export class RecordedReads {
  constructor(private readonly options: RecordedReadsOptions) {}

  /**
   * Runs `op` on the server's pooled connection, records the outcome, and returns the redacted
   * answer. Not safe to repeat: each call asks the upstream and appends one record.
   * @throws GatehouseError as {@link McpService.readUpstream} does (after recording the error), or
   *   what the writer throws (the answer is then withheld).
   */
  async through<T extends { _meta?: Record<string, unknown> }>(
    request: ReadRequest,
    serverId: string,
    op: (conn: UpstreamConnection, timeoutMs: number) => Promise<T>,
  ): Promise<T> {
    let answer: { result: T; redactor: Redactor };
    try {
      answer = await this.options.mcp.readUpstream(
        this.options.principal.tenant,
        serverId,
        async (c, t) => {
          const result = await op(c, t);
          return { result, redactor: c.redactor };
        },
      );
    } catch (err) {
      const code = isGatehouseError(err) ? err.code : ErrorCode.INTERNAL;
      await this.record(request, serverId, { outcome: ReadOutcome.error, code });
      throw err;
    }
    // What canonical JSON cannot hold (Infinity, nesting past the bound) is neither digested nor
    // passed on.
    const problem = jsonValueProblem(answer.result);
    if (problem) {
      await this.record(request, serverId, {
        outcome: ReadOutcome.error,
        code: ErrorCode.UNAVAILABLE,
      });
      throw new GatehouseError(
        ErrorCode.UNAVAILABLE,
        `The upstream's answer cannot be kept as JSON at ${problem.pointer || 'its top'}: ${problem.reason}.`,
        { details: { pointer: problem.pointer, rule: problem.rule } },
      );
    }
    const { value, removals } = answer.redactor.redactJson(answer.result);
    const { _meta: _, ...content } = value;
    const bytes = canonicalBytes(content);
    await this.record(request, serverId, {
      outcome: ReadOutcome.ok,
      content: { bytes: bytes.length, sha256: sha256Hex(bytes) },
      ...(removals.length > 0 ? { redactions: removals } : {}),
    });
    return value;
  }

  /**
   * Records a refusal and returns the error to throw (INVALID_INPUT, so the agent sees `-32602`).
   * @throws what the writer throws.
   */
  async refuse(
    request: ReadRequest,
    serverId: string | null,
    reason: ReadRefusal,
    message: string,
  ): Promise<GatehouseError> {
    await this.record(request, serverId, {
      outcome: ReadOutcome.refused,
      code: ErrorCode.INVALID_INPUT,
      reason,
    });
    return new GatehouseError(ErrorCode.INVALID_INPUT, message, { details: { reason } });
  }

  private async record(
    request: ReadRequest,
    serverId: string | null,
    outcome: Record<string, unknown> & { outcome: ReadOutcome },
  ): Promise<void> {
    const p = this.options.principal;
    const what =
      request.type === ReadType.resource
        ? this.bounded('uri', request.uri)
        : {
            ...this.bounded('name', request.name),
            ...(request.prompt !== undefined ? this.bounded('prompt', request.prompt) : {}),
            // The digest, not the values: they may be large or hold secrets, and the log keeps
            // every byte forever. Absent arguments count as {}, as MCP treats them.
            argumentsSha256: canonicalDigest(request.arguments ?? {}),
          };
    await this.options.writer.append([
      {
        tenant: p.tenant,
        type: request.type,
        subject: serverId !== null ? `mcp-server/${serverId}` : `principal/${p.id}`,
        at: isoTime(this.options.writer.clock.now()),
        actor: p.id,
        data: {
          serverId,
          ...what,
          agent: p.agent,
          sessionSha256: request.sessionSha256,
          ...outcome,
        },
      },
    ]);
  }

  /** A text the agent sent, redacted, and cut (with the digest of the whole) when too long. */
  private bounded(key: string, text: string): Record<string, string> {
    const clean = patternRedactor().redactText(text).text;
    const cut = cutText(clean, MAX_TEXT);
    return cut === clean ? { [key]: clean } : { [key]: cut, [`${key}Sha256`]: sha256Hex(clean) };
  }
}
