import { ErrorCode, GatehouseError, isoTime, requestHash } from '../core/index.js';
import type { Clock, IdGenerator } from '../core/index.js';
import { hasRole } from '../tenancy/index.js';
import type { Directory, Principal } from '../tenancy/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { InvocationRecord } from './invocation-record.js';
import type { InvocationQuery, InvocationStore } from './invocation-store.js';
import type { Pipeline } from './pipeline.js';

/** What an agent asks for (DESIGN §9, `POST /v1/invocations`). */
export interface InvokeRequest {
  tool: { id: string; version: string };
  input: unknown;
  environment: string;
  idempotencyKey: string;
  runId?: string;
  attemptId?: string;
  approvalId?: string;
}

/** Collaborators of the {@link InvocationService}. */
export interface InvocationServiceOptions {
  pipeline: Pipeline;
  store: InvocationStore;
  registry: ToolRegistry;
  directory: Directory;
  clock: Clock;
  ids: IdGenerator;
}

/**
 * The entry point for invocations: idempotency (the same key and request hash is the same
 * invocation, never executed twice, even when duplicates arrive together), then the pipeline.
 */
export class InvocationService {
  private readonly inFlight = new Map<string, { hash: string; done: Promise<InvocationRecord> }>();
  private readonly shutdown = new AbortController();

  constructor(private readonly o: InvocationServiceOptions) {}

  /**
   * Runs or replays an invocation.
   * @throws GatehouseError FORBIDDEN (not an agent), IDEMPOTENCY_KEY_REUSED (same key, another
   *   request), EFFECT_UNCERTAIN (a retry of an unresolved Uncertain request).
   */
  async invoke(principal: Principal, req: InvokeRequest): Promise<InvocationRecord> {
    if (!hasRole(principal, 'agent') || !principal.agent || !principal.project) {
      throw new GatehouseError(
        ErrorCode.FORBIDDEN,
        'Only agent principals (with a project and an agent release) may invoke tools.',
      );
    }
    const project = principal.project;
    const agent = principal.agent;
    const hash = requestHash({
      tenant: principal.tenant,
      project,
      environment: req.environment,
      agent,
      tool: req.tool,
      input: req.input,
    });
    const key = `${principal.tenant}\u0000${principal.id}\u0000${req.idempotencyKey}`;
    const running = this.inFlight.get(key);
    if (running) {
      if (running.hash !== hash) throw reused(req.idempotencyKey, hash, running.hash);
      return running.done;
    }
    const done = (async () => {
      const existing = await this.o.store.findByKey(
        principal.tenant,
        principal.id,
        req.idempotencyKey,
      );
      if (existing) return replay(existing, req.idempotencyKey, hash);
      return this.start(principal, project, agent, req, hash);
    })();
    this.inFlight.set(key, { hash, done });
    try {
      return await done;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private start(
    principal: Principal,
    project: string,
    agent: { id: string; version: string },
    req: InvokeRequest,
    hash: string,
  ): Promise<InvocationRecord> {
    const now = isoTime(this.o.clock.now());
    const tool = this.o.registry.tool(principal.tenant, req.tool.id, req.tool.version);
    const record: InvocationRecord = {
      id: this.o.ids.next(),
      status: 'running',
      tenant: principal.tenant,
      project,
      environment: req.environment,
      principal: principal.id,
      agent,
      tool: {
        id: req.tool.id,
        version: req.tool.version,
        descriptorDigest: tool?.stored.digest ?? null,
      },
      input: req.input,
      requestHash: hash,
      idempotencyKey: req.idempotencyKey,
      effectiveClass: null,
      runId: req.runId ?? null,
      attemptId: req.attemptId ?? null,
      approvalId: req.approvalId ?? null,
      trace: [],
      warnings: [],
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      audit: null,
    };
    const release = this.o.registry.agentRelease(principal.tenant, agent.id, agent.version);
    const environment = this.o.directory.environment(principal.tenant, project, req.environment);
    return this.o.pipeline.run({
      record,
      principal,
      signal: this.shutdown.signal,
      ...(tool ? { tool } : {}),
      ...(release ? { release } : {}),
      ...(environment ? { environment } : {}),
    });
  }

  /** The invocation if the principal may see it: agents their own, other roles their tenant's. */
  async get(principal: Principal, id: string): Promise<InvocationRecord> {
    const record = await this.o.store.get(principal.tenant, id);
    if (!record || (isOnlyAgent(principal) && record.principal !== principal.id)) {
      throw new GatehouseError(
        ErrorCode.NOT_FOUND,
        `Invocation ${JSON.stringify(id)} does not exist.`,
      );
    }
    return record;
  }

  /** A tenant's invocations, newest first; agents see their own. */
  list(principal: Principal, query: InvocationQuery): Promise<InvocationRecord[]> {
    return this.o.store.list(
      principal.tenant,
      isOnlyAgent(principal) ? { ...query, principal: principal.id } : query,
    );
  }

  /**
   * The receipt (a DSSE envelope) of an invocation whose outcome is decided.
   * @throws GatehouseError NOT_FOUND, or CONFLICT while the outcome is not decided yet.
   */
  async receipt(principal: Principal, id: string): Promise<unknown> {
    const record = await this.get(principal, id);
    const receipt = await this.o.store.receipt(principal.tenant, record.id);
    if (receipt === undefined) {
      throw new GatehouseError(
        ErrorCode.CONFLICT,
        `Invocation ${id} is ${record.status}; its receipt is signed when its outcome is decided.`,
        { details: { status: record.status } },
      );
    }
    return receipt;
  }

  /** Aborts every running call (their executors see the signal). Safe to call twice. */
  abortAll(): void {
    this.shutdown.abort(new Error('Gatehouse is shutting down'));
  }
}

function replay(existing: InvocationRecord, key: string, hash: string): InvocationRecord {
  if (existing.requestHash !== hash) throw reused(key, hash, existing.requestHash);
  if (existing.status === 'uncertain') {
    throw new GatehouseError(
      ErrorCode.EFFECT_UNCERTAIN,
      `Invocation ${existing.id} for this request ended uncertain: its effect may have happened. An operator must confirm or deny the effect (POST /v1/invocations/${existing.id}/resolve) before it can be retried.`,
      { details: { invocation: existing.id } },
    );
  }
  return existing;
}

function reused(key: string, hash: string, previous: string): GatehouseError {
  return new GatehouseError(
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    `Idempotency-Key ${JSON.stringify(key)} was already used for another request (request hash ${previous}, this one ${hash}); use a new key for a new request.`,
    { details: { requestHash: hash, previousRequestHash: previous } },
  );
}

function isOnlyAgent(p: Principal): boolean {
  return p.roles.every((r) => r === 'agent');
}
