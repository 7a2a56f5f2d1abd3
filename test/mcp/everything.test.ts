import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { processAlive } from '../../src/mcp/index.js';
import { ACTOR, McpHarness, TENANT, everything } from './mcp-harness.js';

let h: McpHarness;
beforeEach(async () => {
  h = await McpHarness.open();
});
afterEach(async () => {
  await h.close();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'no error';
  } catch (err) {
    return isGatehouseError(err) ? err.code : String(err);
  }
}

describe('server-everything over stdio', () => {
  it('verifies, binds, activates and calls echo through the executor', async () => {
    const s = await h.mcp.register(TENANT, ACTOR, { name: 'everything', transport: everything });
    expect(s.state).toBe('registered');
    const view = await h.mcp.verify(TENANT, s.id, ACTOR);
    expect(view.server.state).toBe('verified');
    const names = view.discovery!.tools.map((t) => t.tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'toggle-simulated-logging']));
    expect(view.discovery!.resources.length).toBeGreaterThan(0);
    expect(view.discovery!.prompts.length).toBeGreaterThan(0);
    expect(view.discovery!.tools[0]!.digest).toMatch(/^[0-9a-f]{64}$/);

    const echo = await h.mcp.bind(TENANT, s.id, ACTOR, {
      tool: 'echo',
      class: 'read',
      descriptor: { id: 'everything.echo', version: '1.0.0' },
    });
    expect(echo.descriptor).toMatchObject({
      id: 'everything.echo',
      kind: 'mcp',
      sideEffect: { class: 'read' },
      execution: { server: s.id, tool: 'echo', digest: echo.binding.digest },
    });
    expect(echo.descriptor.inputSchema).toMatchObject({
      properties: { message: { type: 'string' } },
    });
    expect(echo.descriptor.inputSchema.$schema).toBeUndefined();

    // Not callable before activation.
    expect(await h.call(echo.descriptor, { message: 'hi' })).toMatchObject({
      status: 'failed',
      code: 'SERVER_NOT_ACTIVE',
    });
    await h.mcp.activate(TENANT, s.id, ACTOR);
    const r = await h.call(echo.descriptor, { message: 'hi' });
    expect(r).toEqual({
      status: 'observed',
      output: { content: [{ type: 'text', text: 'Echo: hi' }] },
    });

    const states = (await h.events())
      .filter((e) => e.type === 'McpServerStateChanged')
      .map((e) => e.data.to);
    expect(states).toEqual(['registered', 'verified', 'active']);
    const types = (await h.audit()).map((a) => a.type);
    expect(types).toEqual([
      'mcp.server.registered',
      'mcp.server.verified',
      'mcp.tool.bound',
      'mcp.server.active',
    ]);
  });

  it("annotations never lower the maintainer's class, and a warning says when they disagree", async () => {
    const s = await h.mcp.register(TENANT, ACTOR, { name: 'everything', transport: everything });
    await h.mcp.verify(TENANT, s.id, ACTOR);
    const w = await h.mcp.bind(TENANT, s.id, ACTOR, {
      tool: 'toggle-simulated-logging',
      class: 'read',
      descriptor: { id: 'everything.toggle', version: '1.0.0' },
    });
    expect(w.descriptor.sideEffect.class).toBe('read');
    expect(w.warnings.join()).toMatch(/readOnlyHint: false/);
    const echo = await h.mcp.bind(TENANT, s.id, ACTOR, {
      tool: 'echo',
      class: 'shared-write',
      descriptor: { id: 'everything.echo', version: '1.0.0' },
    });
    // readOnlyHint: true upstream does not lower it.
    expect(echo.descriptor.sideEffect.class).toBe('shared-write');
  });

  it('refuses a second registration of the same identity, even renamed', async () => {
    await h.mcp.register(TENANT, ACTOR, { name: 'everything', transport: everything });
    expect(
      await codeOf(h.mcp.register(TENANT, ACTOR, { name: 'other name', transport: everything })),
    ).toBe('CONFLICT');
    // Other arguments are another server.
    await h.mcp.register(TENANT, ACTOR, {
      name: 'x',
      transport: { ...everything, args: [...everything.args, '--flag'] },
    });
    // Another tenant may register it.
    await h.mcp.register('globex', ACTOR, { name: 'everything', transport: everything });
  });

  it('refuses URLs the egress check refuses, and illegal lifecycle moves', async () => {
    for (const url of ['file:///etc/passwd', 'http://user:secret@example.com/mcp', 'not a url']) {
      expect(
        await codeOf(
          h.mcp.register(TENANT, ACTOR, { name: 'u', transport: { type: 'http', url } }),
        ),
      ).toBe('INVALID_INPUT');
    }
    const s = await h.mcp.register(TENANT, ACTOR, { name: 'everything', transport: everything });
    expect(await codeOf(h.mcp.activate(TENANT, s.id, ACTOR))).toBe('CONFLICT');
    expect(
      await codeOf(
        h.mcp.bind(TENANT, s.id, ACTOR, {
          tool: 'echo',
          class: 'read',
          descriptor: { id: 'e', version: '1.0.0' },
        }),
      ),
    ).toBe('CONFLICT');
    await h.mcp.retire(TENANT, s.id, ACTOR);
    expect(await codeOf(h.mcp.verify(TENANT, s.id, ACTOR))).toBe('CONFLICT');
    expect(await codeOf(h.mcp.retire(TENANT, s.id, ACTOR))).toBe('CONFLICT');
    expect(await codeOf(h.mcp.get(TENANT, 'nope'))).toBe('NOT_FOUND');
    expect(await codeOf(h.mcp.get('globex', s.id))).toBe('NOT_FOUND');
  });

  it('retire kills the process and calls fail; close() leaves no process', async () => {
    const { id, descriptors } = await h.ready('everything', everything, [
      { tool: 'echo', class: 'read', id: 'everything.echo' },
    ]);
    expect((await h.call(descriptors.echo!, { message: 'a' })).status).toBe('observed');
    const pid = (await h.mcp.connectionPid(TENANT, id))!;
    expect(processAlive(pid)).toBe(true);
    await h.mcp.retire(TENANT, id, ACTOR, 'no longer needed');
    expect(processAlive(pid)).toBe(false);
    expect(await h.call(descriptors.echo!, { message: 'a' })).toMatchObject({
      status: 'failed',
      code: 'SERVER_NOT_ACTIVE',
    });

    const second = await h.ready('again', { ...everything, args: [...everything.args, 'x'] }, [
      { tool: 'echo', class: 'read', id: 'everything.echo2' },
    ]);
    expect((await h.call(second.descriptors.echo!, { message: 'b' })).status).toBe('observed');
    const pid2 = (await h.mcp.connectionPid(TENANT, second.id))!;
    await h.mcp.close();
    await h.mcp.close();
    expect(processAlive(pid2)).toBe(false);
  });
});
