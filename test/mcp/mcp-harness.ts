import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SequentialIds, systemClock } from '../../src/core/index.js';
import type { AuditRecord, SideEffectClass, StoredEvent } from '../../src/core/index.js';
import { OutputCapture, judgeExecution } from '../../src/invocation/index.js';
import type {
  CallerChannel,
  ExecutionRequest,
  ExecutionResult,
} from '../../src/invocation/index.js';
import { McpExecutor } from '../../src/executors/index.js';
import { McpService } from '../../src/mcp/index.js';
import type { McpServiceOptions } from '../../src/mcp/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';
import { patternRedactor } from '../../src/secrets/index.js';
import type { Removal } from '../../src/secrets/index.js';
import {
  FileArtifactStore,
  SqliteAuditStore,
  SqliteDatabase,
  SqliteMcpStore,
  SqliteOutboxFeed,
} from '../../src/storage/index.js';
import { buildFixture } from '../fixtures/build-fixture.js';

export const TENANT = 'acme';
export const ACTOR = 'maint-1';

/** The stdio transport of server-everything. */
export const everything = {
  type: 'stdio' as const,
  command: process.execPath,
  args: [resolve('node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
};

/** A tool of the changing upstream's config file. */
export interface FixtureTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  behaviour?: 'echo' | 'error' | 'hang' | 'crash' | 'flood' | 'env' | 'raw';
  floodBytes?: number;
  /** For `raw`: the JSON text of the result's structured content `value`. */
  raw?: string;
  /** JSON text sent as the schema of the input property `x` in tools/list. */
  rawSchema?: string;
}

/** The changing upstream's config. */
export interface FixtureConfig {
  tools: FixtureTool[];
  /** Resources to list; reading one answers its `raw` JSON text in its content. */
  resources?: { uri: string; name: string; raw: string }[];
  refuseStart?: boolean;
  /** The error line a `refuseStart` upstream writes to stderr. */
  stderr?: string;
  ignoreEof?: boolean;
  silent?: boolean;
  callLog?: string;
}

/** A McpService on a fresh SQLite file, its executor, and readers of its ledger. */
export class McpHarness {
  readonly dir = mkdtempSync(join(tmpdir(), 'gatehouse-mcp-'));
  db!: SqliteDatabase;
  mcp!: McpService;
  executor!: McpExecutor;
  /** Where the calls' cut answers are kept whole. */
  readonly artifacts = new FileArtifactStore(join(this.dir, 'artifacts'));
  /** How many secrets the last call's executor removed (its captures and redactions together). */
  removed = 0;
  private fixture: string | null = null;
  private configs = 0;

  static async open(
    options: Partial<McpServiceOptions> = {},
    maxOutputBytes?: number,
  ): Promise<McpHarness> {
    const h = new McpHarness();
    h.db = await SqliteDatabase.open({ file: join(h.dir, 'g.db') });
    h.mcp = new McpService({
      store: new SqliteMcpStore(h.db),
      clock: systemClock,
      ids: new SequentialIds('srv'),
      probeIntervalMs: 3_600_000,
      // Tests probe by hand unless they ask for re-probes.
      reprobeMs: 3_600_000,
      failuresToDegrade: 2,
      requestTimeoutMs: 5_000,
      baseBackoffMs: 1,
      maxBackoffMs: 5,
      ...options,
    });
    h.executor = new McpExecutor({ mcp: h.mcp, ...(maxOutputBytes ? { maxOutputBytes } : {}) });
    return h;
  }

  /** Writes a changing-upstream config and returns the stdio transport that runs it. */
  upstream(config: FixtureConfig): {
    transport: { type: 'stdio'; command: string; args: string[] };
    file: string;
  } {
    this.fixture ??= buildFixture('changing-upstream');
    this.configs += 1;
    const file = join(this.dir, `upstream-${this.configs}.json`);
    writeFileSync(file, JSON.stringify(config));
    return {
      transport: { type: 'stdio', command: process.execPath, args: [this.fixture, file] },
      file,
    };
  }

  /** Rewrites a config file (the upstream lists the new tools and says its list changed). */
  rewrite(file: string, config: FixtureConfig): void {
    // Replaced whole (write, then rename): the fixture polls the file and must never read it
    // truncated between the two halves of an in-place write.
    const next = `${file}.next`;
    writeFileSync(next, JSON.stringify(config));
    renameSync(next, file);
  }

  /** Registers, verifies and activates a server; binds the given tools. */
  async ready(
    name: string,
    transport: Parameters<McpService['register']>[2]['transport'],
    bind: { tool: string; class: SideEffectClass; id: string }[],
  ): Promise<{ id: string; descriptors: Record<string, ToolDescriptor> }> {
    const s = await this.mcp.register(TENANT, ACTOR, { name, transport });
    await this.mcp.verify(TENANT, s.id, ACTOR);
    const descriptors: Record<string, ToolDescriptor> = {};
    for (const b of bind) {
      const r = await this.mcp.bind(TENANT, s.id, ACTOR, {
        tool: b.tool,
        class: b.class,
        descriptor: { id: b.id, version: '1.0.0' },
      });
      descriptors[b.tool] = r.descriptor;
    }
    await this.mcp.activate(TENANT, s.id, ACTOR);
    return { id: s.id, descriptors };
  }

  /** Runs one call through the executor, judged as the execute stage judges it. */
  async call(
    descriptor: ToolDescriptor,
    input: unknown,
    o: {
      class?: SideEffectClass;
      timeoutMs?: number;
      signal?: AbortSignal;
      /** Where the upstream's sampling and elicitation requests go (none: refused). */
      caller?: CallerChannel;
    } = {},
  ): Promise<ExecutionResult> {
    const captures: OutputCapture[] = [];
    const removed: Removal[] = [];
    const req: ExecutionRequest = {
      invocationId: 'inv-1',
      tenant: TENANT,
      project: 'web',
      environment: {
        tenant: TENANT,
        project: 'web',
        name: 'dev',
        class: 'development',
        frozen: false,
      },
      agent: { id: 'coder', version: '1.0.0' },
      descriptor,
      input,
      requestHash: 'hash-1',
      idempotencyKey: 'key-1',
      effectiveClass: o.class ?? descriptor.sideEffect.class,
      signal: o.signal ?? new AbortController().signal,
      timeoutMs: o.timeoutMs ?? 5_000,
      capture: () => {
        const c = new OutputCapture(this.artifacts, patternRedactor().stream(), 4096);
        captures.push(c);
        return c;
      },
      redact: (value) => {
        const r = patternRedactor().redactJson(value);
        removed.push(...r.removals);
        return r.value;
      },
      redactAlso: () => {},
      ...(o.caller ? { caller: o.caller } : {}),
    };
    const result = judgeExecution(await this.executor.execute(req), req.effectiveClass);
    this.removed = [...removed, ...captures.flatMap((c) => c.removals())].reduce(
      (n, r) => n + r.count,
      0,
    );
    return result;
  }

  /** The tenant's audit records, in order. */
  async audit(): Promise<AuditRecord[]> {
    const store = new SqliteAuditStore(this.db);
    const rows = await store.records(TENANT, 0, await store.size(TENANT));
    return rows.map((r) => JSON.parse(r.record) as AuditRecord);
  }

  /** The tenant's outbox events, in order. */
  events(): Promise<StoredEvent[]> {
    return new SqliteOutboxFeed(this.db).after(TENANT, 0, 10_000);
  }

  async close(): Promise<void> {
    await this.mcp.close();
    await this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Waits until `check` holds, polling every 20 ms, up to `ms`. */
export async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
