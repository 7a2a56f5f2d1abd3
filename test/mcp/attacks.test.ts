import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from '../../src/mcp/index.js';
import type { ExecutionResult } from '../../src/invocation/index.js';
import { collectGarbage } from '../helpers/memory.js';
import type { FixtureTool } from './mcp-harness.js';
import { ACTOR, McpHarness, TENANT, until } from './mcp-harness.js';

/** A GitHub token's shape: the known-pattern redactor removes it. */
const TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}A1b2C3`;

let h: McpHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const tool = (
  name: string,
  behaviour: FixtureTool['behaviour'],
  extra: Partial<FixtureTool> = {},
): FixtureTool => ({
  name,
  inputSchema: { type: 'object' },
  behaviour,
  ...extra,
});

describe('misbehaving upstreams', () => {
  it('a hanging tool times out: failed for read, uncertain for write', async () => {
    h = await McpHarness.open();
    const up = h.upstream({ tools: [tool('hang', 'hang')] });
    const { descriptors } = await h.ready('hang', up.transport, [
      { tool: 'hang', class: 'workspace-write', id: 'fixture.hang' },
    ]);
    expect(await h.call(descriptors.hang!, {}, { class: 'read', timeoutMs: 200 })).toMatchObject({
      status: 'failed',
      code: 'TIMEOUT',
    });
    expect(await h.call(descriptors.hang!, {}, { timeoutMs: 200 })).toMatchObject({
      status: 'uncertain',
      code: 'TIMEOUT',
    });
    // An abort (revocation, shutdown) after sending is uncertain too; before sending, failed.
    const ac = new AbortController();
    setTimeout(() => ac.abort({ code: 'REVOKED' }), 100);
    expect(await h.call(descriptors.hang!, {}, { signal: ac.signal })).toMatchObject({
      status: 'uncertain',
    });
    expect(await h.call(descriptors.hang!, {}, { signal: AbortSignal.abort() })).toMatchObject({
      status: 'failed',
      code: 'ABORTED',
    });
  });

  it('an upstream that crashes mid-call: uncertain for write, failed for read', async () => {
    h = await McpHarness.open();
    const log = join(h.dir, 'calls.log');
    writeFileSync(log, '');
    const up = h.upstream({ tools: [tool('crash', 'crash')], callLog: log });
    const { descriptors } = await h.ready('crash', up.transport, [
      { tool: 'crash', class: 'shared-write', id: 'fixture.crash' },
    ]);
    const r = await h.call(descriptors.crash!, {});
    expect(r).toMatchObject({ status: 'uncertain', code: 'CONNECTION_LOST' });
    expect(readFileSync(log, 'utf8')).toBe('crash\n'); // it did get the call
    // The next call reconnects (discovery runs again first) and crashes it again.
    expect(await h.call(descriptors.crash!, {}, { class: 'read' })).toMatchObject({
      status: 'failed',
      code: 'CONNECTION_LOST',
    });
  });

  it('100 MB of answers: each cut with the whole kept as an artifact, memory bounded; over the message bound the call fails clearly', async () => {
    h = await McpHarness.open({ maxMessageBytes: 3 * 1024 * 1024 }, 64 * 1024);
    const up = h.upstream({
      tools: [
        tool('big', 'flood', { floodBytes: 2_000_000 }),
        tool('huge', 'flood', { floodBytes: 4_000_000 }),
        tool('EDGE', 'env'),
      ],
    });
    // The env tool answers `the variable holds ` and this: a token across the cut, 32 768 bytes in.
    const edge = `${'z'.repeat(32_768 - 19 - 11)} ${TOKEN} ${'y'.repeat(40_000)}`;
    const transport = { ...up.transport, env: { EDGE: edge } };
    const { descriptors } = await h.ready('flood', transport, [
      { tool: 'big', class: 'read', id: 'fixture.big' },
      { tool: 'huge', class: 'workspace-write', id: 'fixture.huge' },
      { tool: 'EDGE', class: 'read', id: 'fixture.edge' },
    ]);
    type Cut = {
      content: unknown;
      truncated: { originalBytes: number; bytes: number; artifact: string };
    };
    const whole = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(2_000_000) }] });
    const check = (r: ExecutionResult): string => {
      expect(r.status).toBe('observed');
      const out = (r as { output: Cut }).output;
      expect(JSON.stringify(out).length).toBeLessThan(64 * 1024);
      expect(out.truncated).toMatchObject({ originalBytes: whole.length, bytes: whole.length });
      // The whole answer is reported beside the cut one, for the digest of the full output.
      expect(JSON.stringify((r as { full?: unknown }).full)).toBe(whole);
      return out.truncated.artifact;
    };
    // One answer first: the allocator's first-use pools are not growth per answer.
    const artifact = check(await h.call(descriptors.big!, {}));
    await collectGarbage();
    const before = process.memoryUsage();
    // Native memory (buffers) at its highest: what the allocator keeps once it grew. Heap garbage
    // between collections is the collector's slack, gone at the next one (the growth below).
    let nativePeak = before.external;
    const sampler = setInterval(
      () => (nativePeak = Math.max(nativePeak, process.memoryUsage().external)),
      5,
    );
    try {
      // 50 × 2 MB = 100 MB through the executor, one call after another, none kept.
      for (let i = 0; i < 50; i++) expect(check(await h.call(descriptors.big!, {}))).toBe(artifact);
    } finally {
      clearInterval(sampler);
    }
    await collectGarbage();
    expect(process.memoryUsage().rss - before.rss).toBeLessThan(32 * 1024 * 1024);
    // An answer is read and spooled in slices: no buffer the size of an answer, let alone one per
    // chunk read (joining the pending bytes on every chunk piled up 40 MB of them; now 12).
    expect(nativePeak - before.external).toBeLessThan(24 * 1024 * 1024);
    expect((await h.artifacts.get(artifact))?.toString()).toBe(whole);
    // A secret is removed before the answer is cut (no half of it stays in what the agent sees),
    // and from the artifact as it is spooled.
    const cutEdge = (await h.call(descriptors.EDGE!, { name: 'EDGE' })) as {
      output: Cut & { content: { text: string }[] };
    };
    expect(cutEdge.output.content[0]!.text).toMatch(/^the variable holds z+ \[REDACTED:/);
    // One secret, counted once (not once in the artifact and again in what the agent sees).
    expect(h.removed).toBe(1);
    expect(JSON.stringify(cutEdge.output)).not.toContain('ghp_');
    const kept = (await h.artifacts.get(cutEdge.output.truncated.artifact))!.toString();
    expect(kept).toContain(`z [REDACTED:`);
    expect(kept).not.toContain('ghp_');
    // Over the message bound the connection is cut: the tool ran, so a write is uncertain, and
    // the call says why.
    const huge = await h.call(descriptors.huge!, {});
    expect(huge).toMatchObject({ status: 'uncertain', code: 'UPSTREAM_MESSAGE_TOO_LARGE' });
    expect((huge as { message: string }).message).toMatch(/3145728-byte bound/);
    // The server reconnects for the next call.
    expect((await h.call(descriptors.big!, {})).status).toBe('observed');
  });

  it('a killed upstream turns degraded after K probes and active when it is back', async () => {
    h = await McpHarness.open({ failuresToDegrade: 2 });
    const up = h.upstream({ tools: [tool('ping', 'echo')] });
    const { id, descriptors } = await h.ready('flaky', up.transport, [
      { tool: 'ping', class: 'read', id: 'fixture.ping' },
    ]);
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    const pid = (await h.mcp.connectionPid(TENANT, id))!;
    // Killed, and it cannot start again for now.
    h.rewrite(up.file, { tools: [tool('ping', 'echo')], refuseStart: true });
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    await new Promise((r) => setTimeout(r, 10));
    expect(await h.mcp.probe(TENANT, id)).toBe('degraded');
    expect(await h.call(descriptors.ping!, {})).toMatchObject({
      status: 'failed',
      code: 'SERVER_DEGRADED',
    });
    h.rewrite(up.file, { tools: [tool('ping', 'echo')] });
    await new Promise((r) => setTimeout(r, 10));
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    expect((await h.call(descriptors.ping!, { n: 1 })).status).toBe('observed');
    const moves = (await h.events())
      .filter((e) => e.type === 'McpServerStateChanged')
      .map((e) => `${String(e.data.from)}→${String(e.data.to)}`);
    expect(moves.slice(-2)).toEqual(['active→degraded', 'degraded→active']);
  });

  it('a lost upstream is probed again at once: unlisted while unreachable, degraded in moments, active when back', async () => {
    // Re-probes 1, 2 and 4 s after the loss; the third failure degrades it. The seconds between
    // the first failure and the third leave room to see it unlisted but not yet degraded.
    h = await McpHarness.open({ failuresToDegrade: 3, reprobeMs: 1000 });
    const up = h.upstream({ tools: [tool('ping', 'echo')] });
    const { id, descriptors } = await h.ready('dies', up.transport, [
      { tool: 'ping', class: 'read', id: 'fixture.ping' },
    ]);
    const ref = { id: 'fixture.ping', version: '1.0.0' };
    expect(await h.mcp.isCallable(TENANT, id, 'ping', ref)).toBe(true);
    h.rewrite(up.file, { tools: [tool('ping', 'echo')], refuseStart: true });
    process.kill((await h.mcp.connectionPid(TENANT, id))!, 'SIGKILL');
    // No probe was asked for: the lost connection itself starts them.
    await until(async () => !(await h!.mcp.isCallable(TENANT, id, 'ping', ref)), 10_000);
    // Unlisted as soon as a reconnect failed, before the server is degraded.
    expect((await h.mcp.get(TENANT, id)).server.state).toBe('active');
    // Still bound by the stored state: its resources and prompts answer an outage, not a refusal.
    expect(await h.mcp.isBound(TENANT, id, 'ping', ref)).toBe(true);
    await until(async () => (await h!.mcp.get(TENANT, id)).server.state === 'degraded', 15_000);
    expect(await h.call(descriptors.ping!, {})).toMatchObject({ status: 'failed' });
    h.rewrite(up.file, { tools: [tool('ping', 'echo')] });
    await until(async () => (await h!.mcp.get(TENANT, id)).server.state === 'active', 15_000);
    expect(await h.mcp.isCallable(TENANT, id, 'ping', ref)).toBe(true);
    expect((await h.call(descriptors.ping!, { n: 1 })).status).toBe('observed');
  });

  it('an upstream that cannot start fails verification with its telling stderr line', async () => {
    h = await McpHarness.open();
    const up = h.upstream({ tools: [], refuseStart: true });
    const s = await h.mcp.register(TENANT, ACTOR, { name: 'broken', transport: up.transport });
    const err = await h.mcp.verify(TENANT, s.id, ACTOR).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/\(stderr: Error: the fixture refuses to start\)/);
    expect((await h.mcp.get(TENANT, s.id)).server.state).toBe('registered');
  });

  it('a probe while a reconnect backs off counts no failure; the re-probe comes when the backoff ends', async () => {
    h = await McpHarness.open({ failuresToDegrade: 2, baseBackoffMs: 2000, maxBackoffMs: 2000 });
    const up = h.upstream({ tools: [tool('ping', 'echo')] });
    const { id } = await h.ready('backing-off', up.transport, []);
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    h.rewrite(up.file, { tools: [tool('ping', 'echo')], refuseStart: true });
    process.kill((await h.mcp.connectionPid(TENANT, id))!, 'SIGKILL');
    await until(async () => (await h!.mcp.connectionPid(TENANT, id)) === null);
    // One real attempt fails; the next probe lands inside the 2 s backoff and makes none.
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    // No probe was asked for: the one scheduled for the end of the backoff makes attempt two.
    await until(async () => (await h!.mcp.get(TENANT, id)).server.state === 'degraded', 10_000);
    const { stateReason } = (await h.mcp.get(TENANT, id)).server;
    expect(stateReason).toMatch(/^2 health probes failed in a row; last: MCP handshake failed/);
    expect(stateReason).not.toMatch(/reconnecting after/);
  });

  it('the stderr line of an upstream that cannot start is redacted: token shapes and its credentials', async () => {
    const token = `ghp_${'a1B2c3D4e5'.repeat(3)}f6G7h8`;
    const issued = 'upstream-key-7f3a9c21e5';
    h = await McpHarness.open({
      failuresToDegrade: 1,
      issueCredentials: () =>
        Promise.resolve({
          env: { UPSTREAM_KEY: issued },
          headers: [],
          values: [{ name: 'upstream-key', value: issued }],
          release: () => Promise.resolve(),
        }),
    });
    const withKey = (up: ReturnType<McpHarness['upstream']>) => ({
      ...up.transport,
      credentials: [{ ref: 'upstream-key', scope: 'mcp', inject: { env: 'UPSTREAM_KEY' } }],
    });
    const broken = h.upstream({
      tools: [],
      refuseStart: true,
      stderr: `Error: token ${token} denied`,
    });
    const s = await h.mcp.register(TENANT, ACTOR, {
      name: 'leaky',
      transport: withKey(broken),
    });
    const err = await h.mcp.verify(TENANT, s.id, ACTOR).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/\(stderr: Error: token \[REDACTED:github-token\] denied\)/);
    expect(err?.message).not.toContain(token.slice(4));

    // The issued value, in the state reason a failed probe writes (it reaches events and audit).
    const up = h.upstream({ tools: [tool('ping', 'echo')] });
    const { id } = await h.ready('leaky-later', withKey(up), []);
    expect(await h.mcp.probe(TENANT, id)).toBe('active');
    h.rewrite(up.file, {
      tools: [],
      refuseStart: true,
      stderr: `Error: key ${issued} was rejected`,
    });
    process.kill((await h.mcp.connectionPid(TENANT, id))!, 'SIGKILL');
    await until(async () => (await h!.mcp.connectionPid(TENANT, id)) === null);
    expect(await h.mcp.probe(TENANT, id)).toBe('degraded');
    const { stateReason } = (await h.mcp.get(TENANT, id)).server;
    expect(stateReason).toMatch(/\(stderr: Error: key \[REDACTED:[^\]]+\] was rejected\)/);
    expect(JSON.stringify(await h.events())).not.toContain(issued);
    expect(JSON.stringify(await h.audit())).not.toContain(issued);
  });

  it('no process outlives close(), even one that ignores EOF', async () => {
    h = await McpHarness.open();
    const up = h.upstream({ tools: [tool('ping', 'echo')], ignoreEof: true });
    const { id } = await h.ready('stubborn', up.transport, []);
    await h.mcp.probe(TENANT, id);
    const pid = (await h.mcp.connectionPid(TENANT, id))!;
    expect(processAlive(pid)).toBe(true);
    await h.mcp.close();
    expect(processAlive(pid)).toBe(false);
    void ACTOR;
  });
});
