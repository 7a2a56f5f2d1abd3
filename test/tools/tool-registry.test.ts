import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, canonicalDigest, isGatehouseError } from '../../src/core/index.js';
import type { ErrorCode, GatehouseError } from '../../src/core/index.js';
import { JsonSchemaValidator, ToolRegistry } from '../../src/tools/index.js';
import type { ToolDescriptor } from '../../src/tools/index.js';
import { SqliteAuditStore } from '../../src/storage/sqlite/sqlite-audit-store.js';
import { SqliteDatabase } from '../../src/storage/sqlite/sqlite-database.js';
import { SqliteToolStore } from '../../src/storage/sqlite/sqlite-tool-store.js';

let dir: string;
let db: SqliteDatabase;
let clock: ManualClock;
let registry: ToolRegistry;

const canExecute = (d: ToolDescriptor) =>
  d.kind === 'native' && d.execution.handler === 'demo.echo' ? null : 'no handler';

function openRegistry(database: SqliteDatabase): Promise<ToolRegistry> {
  return ToolRegistry.open({
    store: new SqliteToolStore(database),
    clock,
    schemas: new JsonSchemaValidator(),
    canExecute,
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-registry-'));
  db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  clock = new ManualClock();
  registry = await openRegistry(db);
});

afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const descriptor = (over: Partial<ToolDescriptor> = {}): ToolDescriptor => ({
  id: 'demo.echo',
  version: '1.0.0',
  kind: 'native',
  description: 'Echoes its input.',
  inputSchema: {
    type: 'object',
    required: ['text'],
    properties: { text: { type: 'string' } },
    additionalProperties: false,
  },
  sideEffect: { class: 'read' },
  execution: { handler: 'demo.echo' },
  ...over,
});

const published = (id: string, d: ToolDescriptor, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'AssetReleasePublished',
  data: { assetId: d.id, version: d.version, descriptor: d },
  ...extra,
});

const deprecated = (id: string, tool = 'demo.echo', version = '1.0.0', extra = {}) => ({
  id,
  type: 'AssetReleaseDeprecated',
  data: { assetId: tool, version, reason: 'superseded by 2.0.0' },
  ...extra,
});

const revoked = (id: string, tool = 'demo.echo', version = '1.0.0', extra = {}) => ({
  id,
  type: 'AssetReleaseRevoked',
  data: { assetId: tool, version, reason: 'CVE-2026-0001' },
  ...extra,
});

const agentRelease = (
  id: string,
  closure: { id: string; version: string }[],
  maxClass = 'workspace-write',
) => ({
  id,
  type: 'AgentReleasePublished',
  data: { agentId: 'coder', version: '1.0.0', closure, policy: { maxClass } },
});

const apply = (...events: unknown[]) => registry.applyEvents('acme', events, 'publisher-1');

/** The GatehouseError `promise` rejects with; fails the test if it has another code. */
async function refusal(promise: Promise<unknown>, code: ErrorCode): Promise<GatehouseError> {
  const err: unknown = await promise.then(
    () => new Error('expected a refusal, but it resolved'),
    (e: unknown) => e,
  );
  if (!isGatehouseError(err, code)) throw err;
  return err;
}

const pointers = (err: GatehouseError) =>
  (err.details.violations as { pointer: string }[]).map((v) => v.pointer);

describe('ToolRegistry: publication', () => {
  it('activates a published descriptor under the digest of its canonical JSON', async () => {
    const d = descriptor();
    expect(await apply(published('ev-1', d))).toEqual([
      {
        id: 'ev-1',
        type: 'AssetReleasePublished',
        result: 'applied',
        message: 'demo.echo@1.0.0 is active',
      },
    ]);
    const tool = registry.tool('acme', 'demo.echo', '1.0.0');
    expect(tool?.stored).toEqual({
      tenant: 'acme',
      descriptor: d,
      digest: canonicalDigest(d),
      state: 'active',
      inFlightPolicy: 'finish',
      stateReason: null,
      publishedAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(tool?.validateInput({ text: 'hi' })).toBe(true);
    expect(tool?.validateInput({ text: 3 })).toBe(false);
    expect(registry.tool('globex', 'demo.echo', '1.0.0')).toBeUndefined();
    expect(registry.list('globex')).toEqual([]);
  });

  it('keeps the inFlightPolicy of the event', async () => {
    const d = descriptor();
    await apply({
      ...published('ev-1', d),
      data: { ...published('ev-1', d).data, inFlightPolicy: 'abort' },
    });
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.inFlightPolicy).toBe('abort');
  });

  it('applies an event once per id', async () => {
    const audit = new SqliteAuditStore(db);
    await apply(published('ev-1', descriptor()));
    clock.advance(1000);
    const [again] = await apply(published('ev-1', descriptor()));
    expect(again?.result).toBe('duplicate');
    expect(await audit.size('acme')).toBe(1);
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.updatedAt).toBe(
      '2026-01-01T00:00:00.000Z',
    );
  });

  it('refuses an event id reused with other content', async () => {
    await apply(published('ev-1', descriptor()));
    const err = await refusal(
      apply(published('ev-1', descriptor({ version: '1.0.1' }))),
      'CONFLICT',
    );
    expect(err.message).toMatch(/already applied with different content/);
    expect(registry.tool('acme', 'demo.echo', '1.0.1')).toBeUndefined();
  });

  it('treats the same version with the same content as unchanged, other content as a conflict', async () => {
    const d = descriptor();
    await apply(published('ev-1', d));
    const [same] = await apply(published('ev-2', descriptor()));
    expect(same?.result).toBe('unchanged');
    const err = await refusal(
      apply(published('ev-3', descriptor({ description: 'Echoes, differently.' }))),
      'CONFLICT',
    );
    expect(err.message).toMatch(/immutable/);
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.descriptor).toEqual(d);
  });

  it('checks events as it would apply them, changing nothing', async () => {
    const check = (...events: unknown[]) => registry.checkEvents('acme', events, 'publisher-1');
    await check(published('ev-1', descriptor()));
    expect(registry.tool('acme', 'demo.echo', '1.0.0')).toBeUndefined();
    await refusal(check(published('ev-1', descriptor({ id: 'Demo Echo' }))), 'INVALID_EVENT');
    await apply(published('ev-1', descriptor()));
    await check(published('ev-1', descriptor()));
    await refusal(check(published('ev-2', descriptor({ description: 'Other.' }))), 'CONFLICT');
    await refusal(check(published('ev-1', descriptor({ version: '2.0.0' }))), 'CONFLICT');
    await refusal(check(deprecated('ev-3', 'demo.echo', '9.0.0')), 'CONFLICT');
    expect(registry.list('acme')).toHaveLength(1);
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.state).toBe('active');
  });

  it('refuses a descriptor that names another tool than the event', async () => {
    const err = await refusal(
      apply({
        ...published('ev-1', descriptor()),
        data: { assetId: 'demo.other', version: '1.0.0', descriptor: descriptor() },
      }),
      'INVALID_EVENT',
    );
    expect(err.details.pointer).toBe('/data/descriptor/id');
  });

  it('accepts input schemas with an $id, again in later versions and republications', async () => {
    const withId = (version: string) =>
      descriptor({
        version,
        inputSchema: {
          $id: 'https://tools.example/echo/input',
          type: 'object',
          properties: { text: { $ref: '#/$defs/text' } },
          $defs: { text: { type: 'string', maxLength: 3 } },
        },
      });
    await apply(published('ev-1', withId('1.0.0')));
    expect((await apply(published('ev-2', withId('1.0.0'))))[0]?.result).toBe('unchanged');
    expect((await apply(published('ev-3', withId('1.1.0'))))[0]?.result).toBe('applied');
    const tool = registry.tool('acme', 'demo.echo', '1.1.0');
    expect(tool?.validateInput({ text: 'abc' })).toBe(true);
    expect(tool?.validateInput({ text: 'abcd' })).toBe(false);
    const reopened = await openRegistry(db);
    expect(reopened.tool('acme', 'demo.echo', '1.0.0')?.validateInput({ text: 'abcd' })).toBe(
      false,
    );
  });

  it('refuses an event that names another tenant', async () => {
    await refusal(apply(published('ev-1', descriptor(), { tenant: 'globex' })), 'FORBIDDEN');
    expect(registry.list('acme')).toEqual([]);
    expect(registry.list('globex')).toEqual([]);
  });
});

describe('ToolRegistry: deprecation and revocation', () => {
  it('moves active → deprecated → revoked, recording the reason', async () => {
    await apply(published('ev-1', descriptor()));
    clock.advance(60_000);
    const [dep] = await apply(deprecated('ev-2'));
    expect(dep).toMatchObject({ result: 'applied', message: 'demo.echo@1.0.0 is deprecated' });
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored).toMatchObject({
      state: 'deprecated',
      stateReason: 'superseded by 2.0.0',
      publishedAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:01:00.000Z',
    });
    const [rev] = await apply(revoked('ev-3'));
    expect(rev?.result).toBe('applied');
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored).toMatchObject({
      state: 'revoked',
      stateReason: 'CVE-2026-0001',
    });
  });

  it('revokes an active version directly, and a repeat is unchanged', async () => {
    await apply(published('ev-1', descriptor()));
    await apply(revoked('ev-2'));
    const [again] = await apply(revoked('ev-3'));
    expect(again?.result).toBe('unchanged');
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.state).toBe('revoked');
  });

  it('refuses to deprecate a revoked version', async () => {
    await apply(published('ev-1', descriptor()));
    await apply(revoked('ev-2'));
    const err = await refusal(apply(deprecated('ev-3')), 'CONFLICT');
    expect(err.message).toBe('demo.echo@1.0.0 is revoked; it cannot become deprecated.');
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.state).toBe('revoked');
  });

  it('refuses to deprecate or revoke a version never published', async () => {
    await apply(published('ev-1', descriptor()));
    const err = await refusal(apply(deprecated('ev-2', 'demo.echo', '9.0.0')), 'CONFLICT');
    expect(err.message).toMatch(/demo\.echo@9\.0\.0 has not been published/);
    await refusal(apply(revoked('ev-3', 'demo.ghost')), 'CONFLICT');
    await refusal(registry.applyEvents('globex', [deprecated('ev-4')], 'publisher-1'), 'CONFLICT');
  });

  it('refuses a sequence not above the last applied for the asset', async () => {
    await apply(published('ev-1', descriptor(), { sequence: 5 }));
    for (const [id, sequence] of [
      ['ev-2', 3],
      ['ev-3', 5],
    ] as const) {
      const err = await refusal(
        apply(deprecated(id, 'demo.echo', '1.0.0', { sequence })),
        'CONFLICT',
      );
      expect(err.message).toMatch(new RegExp(`sequence ${sequence} for tool/demo\\.echo`));
    }
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.state).toBe('active');
    // Another asset has its own order.
    await apply(published('ev-4', descriptor({ id: 'demo.other' }), { sequence: 1 }));
    await apply(deprecated('ev-5', 'demo.echo', '1.0.0', { sequence: 6 }));
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.state).toBe('deprecated');
  });

  it('applies concurrent batches for one asset in the order they arrived', async () => {
    const results = await Promise.all([
      apply(published('ev-1', descriptor())),
      apply(deprecated('ev-2')),
      apply(revoked('ev-3')),
    ]);
    expect(results.map(([o]) => o?.result)).toEqual(['applied', 'applied', 'applied']);
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.state).toBe('revoked');
  });
});

describe('ToolRegistry: malformed events and descriptors', () => {
  it('names every violation of a malformed event by JSON pointer', async () => {
    const noVersion = {
      id: 'ev-1',
      type: 'AssetReleaseDeprecated',
      data: { assetId: 'demo.echo' },
    };
    expect(pointers(await refusal(apply(noVersion), 'INVALID_EVENT'))).toEqual(['/data/version']);

    const badSemver = deprecated('ev-2', 'demo.echo', '1.0');
    const err = await refusal(apply(badSemver), 'INVALID_EVENT');
    expect(pointers(err)).toEqual(['/data/version']);
    expect(err.message).toMatch(/AssetReleaseDeprecated event "ev-2"/);

    const envelope = { type: 'AssetReleaseExploded', data: {}, extra: 1 };
    expect(pointers(await refusal(apply(envelope), 'INVALID_EVENT')).sort()).toEqual([
      '/extra',
      '/id',
      '/type',
    ]);

    const revokedWithoutReason = {
      id: 'ev-3',
      type: 'AssetReleaseRevoked',
      data: { assetId: 'demo.echo', version: '1.0.0' },
    };
    expect(pointers(await refusal(apply(revokedWithoutReason), 'INVALID_EVENT'))).toEqual([
      '/data/reason',
    ]);
  });

  it('applies nothing of a batch with one malformed event, and says which', async () => {
    const audit = new SqliteAuditStore(db);
    const err = await refusal(
      apply(published('ev-1', descriptor()), deprecated('ev-2'), {
        ...deprecated('ev-3'),
        sequence: -1,
      }),
      'INVALID_EVENT',
    );
    expect(pointers(err)).toEqual(['/2/sequence']);
    expect(registry.list('acme')).toEqual([]);
    expect(await new SqliteToolStore(db).findEvent('acme', 'ev-1')).toBeUndefined();
    expect(await audit.size('acme')).toBe(0);
  });

  it('stops a batch at the first refused event, keeping and listing those before it', async () => {
    const err = await refusal(
      apply(
        published('ev-1', descriptor()),
        deprecated('ev-2', 'demo.echo', '2.0.0'),
        revoked('ev-3'),
      ),
      'CONFLICT',
    );
    expect(err.details.applied).toEqual(['ev-1']);
    expect(registry.tool('acme', 'demo.echo', '1.0.0')?.stored.state).toBe('active');
  });

  const invalidDescriptor = async (d: unknown): Promise<GatehouseError> => {
    const event = {
      id: 'ev-d',
      type: 'AssetReleasePublished',
      data: { assetId: 'demo.echo', version: '1.0.0', descriptor: d },
    };
    const err = await refusal(apply(event), 'INVALID_DESCRIPTOR');
    expect(registry.list('acme')).toEqual([]);
    return err;
  };

  it('refuses an input schema that does not compile', async () => {
    const err = await invalidDescriptor(descriptor({ inputSchema: { type: 'nonsense' } }));
    expect(pointers(err)).toEqual(['/data/descriptor/inputSchema']);
    expect(err.message).toMatch(/\/data\/descriptor\/inputSchema does not compile/);
  });

  it('refuses an output schema that does not compile', async () => {
    const err = await invalidDescriptor(
      descriptor({ outputSchema: { type: 'object', properties: { a: { minimum: 'ten' } } } }),
    );
    expect(pointers(err)).toEqual(['/data/descriptor/outputSchema']);
  });

  it('refuses credentials that collide or frame the request, pointing at each', async () => {
    const err = await invalidDescriptor(
      descriptor({
        credentials: [
          { ref: 'a', scope: 's', inject: { env: 'TOKEN' } },
          { ref: 'b', scope: 's', inject: { env: 'TOKEN' } },
          { ref: 'c', scope: 's', inject: { header: 'Content-Length' } },
        ],
      }),
    );
    expect(err.details.violations).toEqual([
      {
        pointer: '/data/descriptor/credentials/1',
        message: 'injects into env:TOKEN, as credentials/0 already does',
      },
      {
        pointer: '/data/descriptor/credentials/2',
        message: 'may not set the Content-Length header',
      },
    ]);
  });

  it('refuses a sandboxed tool a header credential bound to no origin, saying where to bind it', async () => {
    const err = await invalidDescriptor(
      descriptor({
        kind: 'shell',
        execution: { command: ['/bin/true'] },
        credentials: [
          { ref: 'a', scope: 's', inject: { header: 'X-Key', origin: 'http://api.internal:8080' } },
          { ref: 'b', scope: 's', inject: { header: 'Authorization' } },
        ],
      }),
    );
    const violations = err.details.violations as { pointer: string; message: string }[];
    expect(violations.map((v) => v.pointer)).toEqual(['/data/descriptor/credentials/1/inject']);
    expect(violations[0]!.message).toMatch(
      /^names no origin for the Authorization header: .*any host its egress allows.*origin: "https:\/\/api\.example\.com"/,
    );
  });

  it('refuses a browser tool a fill secret bound to no origin, and an origin on env for other kinds', async () => {
    const browser = await invalidDescriptor(
      descriptor({
        kind: 'browser',
        execution: { allowedActions: ['goto', 'fill'] },
        credentials: [
          { ref: 'a', scope: 's', inject: { env: 'A', origin: 'http://portal.internal:8080' } },
          { ref: 'b', scope: 's', inject: { env: 'B' } },
          { ref: 'c', scope: 's', inject: { env: 'C', host: 'portal.example.com' } },
        ],
      }),
    );
    const found = browser.details.violations as { pointer: string; message: string }[];
    expect(found.map((v) => v.pointer)).toEqual(['/data/descriptor/credentials/1/inject']);
    expect(found[0]!.message).toMatch(
      /^names no origin for the secret b: a browser tool types it into a page.*origin: "https:\/\/portal\.example\.com"/,
    );
    const shell = await invalidDescriptor(
      descriptor({
        kind: 'shell',
        execution: { command: ['/bin/true'] },
        credentials: [{ ref: 'a', scope: 's', inject: { env: 'A', origin: 'https://x.example' } }],
      }),
    );
    expect(shell.details.violations).toEqual([
      {
        pointer: '/data/descriptor/credentials/0/inject',
        message: expect.stringMatching(/only a browser tool's fill honours/) as unknown,
      },
    ]);
  });

  it('refuses an unknown kind', async () => {
    const err = await invalidDescriptor({ ...descriptor(), kind: 'quantum' });
    expect(pointers(err)).toEqual(['/data/descriptor/kind']);
    expect(err.message).toMatch(/"quantum"/);
  });

  it('refuses an unknown side-effect class', async () => {
    const err = await invalidDescriptor({ ...descriptor(), sideEffect: { class: 'dangerous' } });
    expect(pointers(err)).toEqual(['/data/descriptor/sideEffect/class']);
  });

  it('refuses a class rule whose regular expression does not compile', async () => {
    const err = await invalidDescriptor(
      descriptor({
        sideEffect: {
          class: 'read',
          rules: [
            { pointer: '/text', equals: 'rm', raiseTo: 'production' },
            { pointer: '/text', matches: '([a-z]', raiseTo: 'shared-write' },
          ],
        },
      }),
    );
    expect(pointers(err)).toEqual(['/data/descriptor/sideEffect/rules/1/matches']);
  });

  it('names several problems at once', async () => {
    const err = await invalidDescriptor({
      ...descriptor(),
      kind: 'quantum',
      sideEffect: { class: 'dangerous' },
      inputSchema: { type: 7 },
    });
    expect(pointers(err).sort()).toEqual([
      '/data/descriptor/inputSchema',
      '/data/descriptor/kind',
      '/data/descriptor/sideEffect/class',
    ]);
  });

  it('refuses a descriptor of the wrong shape', async () => {
    const { description: _omitted, ...noDescription } = descriptor();
    const err = await invalidDescriptor({ ...noDescription, id: 'Bad Id!' });
    expect(pointers(err).sort()).toEqual(['/data/descriptor/description', '/data/descriptor/id']);
  });

  it('refuses a descriptor this gateway cannot run', async () => {
    const err = await invalidDescriptor(descriptor({ execution: { handler: 'nope' } }));
    expect(err.details.violations).toEqual([
      { pointer: '/data/descriptor/execution', message: 'no handler' },
    ]);
  });
});

describe('ToolRegistry: agent releases', () => {
  const tool = (id: string, cls: ToolDescriptor['sideEffect']['class'] = 'read') =>
    descriptor({ id, sideEffect: { class: cls } });

  beforeEach(async () => {
    await apply(
      published('p-1', tool('demo.read')),
      published('p-2', tool('demo.old')),
      published('p-3', tool('demo.bad')),
      published('p-4', tool('demo.deploy', 'production')),
      published('p-5', tool('demo.write', 'workspace-write')),
      deprecated('d-1', 'demo.old'),
      revoked('r-1', 'demo.bad'),
    );
  });

  it('rejects a closure naming unknown, deprecated, revoked and above-maxClass tools', async () => {
    const err = await refusal(
      apply(
        agentRelease('a-1', [
          { id: 'demo.read', version: '1.0.0' },
          { id: 'demo.ghost', version: '1.0.0' },
          { id: 'demo.old', version: '1.0.0' },
          { id: 'demo.bad', version: '1.0.0' },
          { id: 'demo.deploy', version: '1.0.0' },
          { id: 'demo.read', version: '2.0.0' },
        ]),
      ),
      'INVALID_EVENT',
    );
    expect(err.message).toMatch(/^Agent release coder@1\.0\.0 is rejected/);
    expect(err.message).toContain(
      '/data/closure/1 demo.ghost@1.0.0 is not a published tool (no version of demo.ghost is published)',
    );
    expect(err.message).toContain('/data/closure/2 demo.old@1.0.0 is deprecated');
    expect(err.message).toContain('/data/closure/3 demo.bad@1.0.0 is revoked');
    expect(err.message).toContain(
      "/data/closure/4 demo.deploy@1.0.0 declares class production, above the release's maxClass workspace-write",
    );
    expect(err.message).toContain(
      '/data/closure/5 demo.read@2.0.0 is not a published tool (versions of demo.read: 1.0.0 (active))',
    );
    expect(err.message).not.toContain('/data/closure/0');
    expect(err.details.problems).toHaveLength(5);
    expect(registry.agentRelease('acme', 'coder', '1.0.0')).toBeUndefined();
  });

  it('publishes a closure of active tools within maxClass, once', async () => {
    const closure = [
      { id: 'demo.read', version: '1.0.0' },
      { id: 'demo.write', version: '1.0.0' },
    ];
    const [first] = await apply(agentRelease('a-1', closure));
    expect(first?.result).toBe('applied');
    const release = {
      agentId: 'coder',
      version: '1.0.0',
      closure,
      policy: { maxClass: 'workspace-write' },
    };
    expect(registry.agentRelease('acme', 'coder', '1.0.0')).toEqual({
      tenant: 'acme',
      release,
      digest: canonicalDigest(release),
      publishedAt: '2026-01-01T00:00:00.000Z',
    });
    expect((await apply(agentRelease('a-2', closure)))[0]?.result).toBe('unchanged');
    const err = await refusal(apply(agentRelease('a-3', closure, 'production')), 'CONFLICT');
    expect(err.message).toMatch(/coder@1\.0\.0 is already published/);
    expect(registry.agentRelease('acme', 'coder', '1.0.0')?.release.policy.maxClass).toBe(
      'workspace-write',
    );
  });

  it('allows production tools when maxClass is production', async () => {
    const [o] = await apply(
      agentRelease('a-1', [{ id: 'demo.deploy', version: '1.0.0' }], 'production'),
    );
    expect(o?.result).toBe('applied');
  });
});

describe('ToolRegistry: persistence and audit', () => {
  it('restores descriptors, states, releases and applied ids when reopened', async () => {
    await apply(
      published('ev-1', descriptor()),
      published('ev-2', descriptor({ version: '2.0.0' }), { sequence: 4 }),
      deprecated('ev-3'),
      agentRelease('ev-4', [{ id: 'demo.echo', version: '2.0.0' }]),
    );
    const before = registry.list('acme');
    await db.close();

    db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
    const reopened = await openRegistry(db);
    expect(reopened.list('acme')).toEqual(before);
    expect(reopened.list('acme').map((d) => [d.descriptor.version, d.state])).toEqual([
      ['1.0.0', 'deprecated'],
      ['2.0.0', 'active'],
    ]);
    expect(reopened.agentRelease('acme', 'coder', '1.0.0')?.release.closure).toEqual([
      { id: 'demo.echo', version: '2.0.0' },
    ]);
    expect(reopened.tool('acme', 'demo.echo', '2.0.0')?.validateInput({ text: 'x' })).toBe(true);
    expect(reopened.tool('acme', 'demo.echo', '2.0.0')?.validateInput({})).toBe(false);
    const again = await reopened.applyEvents('acme', [deprecated('ev-3')], 'publisher-1');
    expect(again[0]?.result).toBe('duplicate');
    await refusal(
      reopened.applyEvents(
        'acme',
        [published('ev-5', descriptor({ version: '3.0.0' }), { sequence: 4 })],
        'p',
      ),
      'CONFLICT',
    );
  });

  it('leaves one audit record per applied event, and outbox events for state changes', async () => {
    const audit = new SqliteAuditStore(db);
    const outcomes = await apply(
      published('ev-1', descriptor()),
      published('ev-2', descriptor()),
      deprecated('ev-3'),
      revoked('ev-4'),
      published('ev-1', descriptor()),
    );
    expect(outcomes.map((o) => o.result)).toEqual([
      'applied',
      'unchanged',
      'applied',
      'applied',
      'duplicate',
    ]);
    expect(await audit.size('acme')).toBe(4);
    const records = (await audit.records('acme', 0, 4)).map(
      (r) =>
        JSON.parse(r.record) as {
          type: string;
          actor: string;
          subject: string;
          data: { eventId: string };
        },
    );
    expect(records.map((r) => [r.type, r.data.eventId])).toEqual([
      ['descriptor.activated', 'ev-1'],
      ['descriptor.republished', 'ev-2'],
      ['descriptor.deprecated', 'ev-3'],
      ['descriptor.revoked', 'ev-4'],
    ]);
    expect(
      records.every((r) => r.actor === 'publisher-1' && r.subject === 'tool/demo.echo@1.0.0'),
    ).toBe(true);
    const outbox = db.all(db.kysely.selectFrom('outbox').select('type').orderBy('seq'));
    expect(outbox.map((e) => e.type)).toEqual([
      'DescriptorActivated',
      'DescriptorRetired',
      'DescriptorRetired',
    ]);
  });

  it('writes no audit record for a refused event', async () => {
    const audit = new SqliteAuditStore(db);
    await apply(published('ev-1', descriptor()), revoked('ev-2'));
    await refusal(apply(deprecated('ev-3')), 'CONFLICT');
    await refusal(
      apply(agentRelease('ev-4', [{ id: 'demo.echo', version: '1.0.0' }])),
      'INVALID_EVENT',
    );
    expect(await audit.size('acme')).toBe(2);
    expect(await new SqliteToolStore(db).findEvent('acme', 'ev-3')).toBeUndefined();
  });
});
