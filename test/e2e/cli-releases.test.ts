import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../fixtures/build-fixture.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import type { CliRun } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

const show = (r: CliRun) => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

function as(g: DemoGateway, token: string) {
  return (...args: string[]) => runCli(args, { GATEHOUSE_URL: g.url!, GATEHOUSE_TOKEN: token });
}

describe('a newly bound MCP tool, called after an agent release holds it (docs/cli.md)', () => {
  let g: DemoGateway;
  beforeAll(async () => {
    ensureBuilt();
    g = await startDemoGateway({ listen: true });
  });
  afterAll(async () => {
    await g?.close();
  });

  it('binds, publishes demo-agent@1.1.0 from 1.0.0 with it, and its agent calls it', async () => {
    const admin = as(g, g.tokens.admin);
    const maintainer = as(g, g.tokens.maintainer);
    const [server] = await g.gateway.mcp.list('acme');
    // Binding declares the tool's class: the maintainer's (DESIGN §5); the admin publishes.
    const bound = await maintainer(
      'mcp',
      'bind',
      server!.id,
      'get-tiny-image',
      '--class',
      'read',
      '--as',
      'mine/tiny-image@1.0.0',
    );
    expect(bound.code, show(bound)).toBe(0);
    expect(bound.stdout).toContain('gatehouse releases publish AGENT@NEW --from AGENT@CURRENT');

    // The demo agent's release does not hold the new tool.
    const before = await as(g, g.tokens.agent)('invoke', 'mine/tiny-image@1.0.0', '--input', '{}');
    expect(before.code, show(before)).toBe(3);
    expect(before.stderr).toMatch(/^403 PERMISSION_DENIED: /);

    const publish = [
      'releases',
      'publish',
      'demo-agent@1.1.0',
      '--from',
      'demo-agent@1.0.0',
      '--add',
      'mine/tiny-image@1.0.0',
    ];
    const published = await admin(...publish);
    expect(published.code, show(published)).toBe(0);
    const release = g.gateway.registry.agentRelease('acme', 'demo-agent', '1.1.0')!.release;
    const base = g.gateway.registry.agentRelease('acme', 'demo-agent', '1.0.0')!.release;
    expect(published.stdout).toMatch(
      new RegExp(
        `^demo-agent@1\\.1\\.0: applied, ${base.closure.length + 1} tools, maxClass production`,
      ),
    );
    expect(release.closure).toEqual([...base.closure, { id: 'mine/tiny-image', version: '1.0.0' }]);
    expect(release.policy).toEqual(base.policy);

    // The same command again is the same event: a duplicate, not a conflict.
    const again = await admin(...publish);
    expect(again.code, show(again)).toBe(0);
    expect(again.stdout).toMatch(/^demo-agent@1\.1\.0: duplicate/);

    const shown = await admin('releases', 'show', 'demo-agent@1.1.0');
    expect(shown.stdout.trimEnd().split('\n').slice(1)).toEqual(
      release.closure.map((t) => `  ${t.id}@${t.version}`),
    );

    const principal = await admin(
      'principals',
      'add',
      'bot',
      '--role',
      'agent',
      '--project',
      'web',
      '--agent',
      'demo-agent@1.1.0',
    );
    const { token } = JSON.parse(principal.stdout) as { token: string };
    const called = await as(g, token)('invoke', 'mine/tiny-image@1.0.0', '--input', '{}');
    expect(called.code, show(called)).toBe(0);
    expect(called.stdout).toMatch(/^200 observed: mine\/tiny-image@1\.0\.0 in dev/);
    expect(called.stdout).toContain('"mimeType": "image/png"');
  });

  it('GET /v1/agent-releases lists every release to the others, and an agent its own', async () => {
    type Listed = { releases: { agentId: string; version: string; closure: unknown[] }[] };
    const all = await g.inject<Listed>('GET', '/v1/agent-releases?agent=demo-agent', {
      token: g.tokens.reviewer,
    });
    expect(all.body.releases.map((r) => r.version)).toEqual(['1.0.0', '1.1.0']);
    const own = await g.inject<Listed>('GET', '/v1/agent-releases', { token: g.tokens.agent });
    expect(own.body.releases.map((r) => `${r.agentId}@${r.version}`)).toEqual(['demo-agent@1.0.0']);
    expect(own.body.releases[0]!.closure).toEqual(
      g.gateway.registry.agentRelease('acme', 'demo-agent', '1.0.0')!.release.closure,
    );
  });

  it('refuses releases it cannot build, naming what exists', async () => {
    const admin = as(g, g.tokens.admin);
    const noBase = await admin(
      'releases',
      'publish',
      'demo-agent@2.0.0',
      '--from',
      'demo-agent@9.9.9',
    );
    expect(noBase.code, show(noBase)).toBe(3);
    expect(noBase.stderr).toMatch(
      /agent release demo-agent@9\.9\.9 is not published \(versions of demo-agent: 1\.0\.0/,
    );

    const noTool = await admin(
      'releases',
      'publish',
      'demo-agent@2.0.0',
      '--from',
      'demo-agent@1.0.0',
      '--add',
      'demo/echo@7.0.0',
    );
    expect(noTool.code, show(noTool)).toBe(3);
    expect(noTool.stderr).toMatch(
      /^422 INVALID_EVENT: .*demo\/echo@7\.0\.0 is not a published tool \(versions of demo\/echo: 1\.0\.0 \(active\)\)/,
    );

    const usage = await admin(
      'releases',
      'publish',
      'demo-agent@2.0.0',
      '--add',
      'demo/echo@1.0.0',
    );
    expect(usage.code, show(usage)).toBe(2);
    expect(usage.stderr).toContain('give --max-class, or --from a release');

    const unknownAgent = await admin(
      'principals',
      'add',
      'bot2',
      '--role',
      'agent',
      '--project',
      'web',
      '--agent',
      'demo-agent@9.9.9',
    );
    expect(unknownAgent.code, show(unknownAgent)).toBe(3);
    expect(unknownAgent.stderr).toMatch(/^404 NOT_FOUND: .*\(versions of demo-agent: 1\.0\.0/);
    expect(g.gateway.registry.agentRelease('acme', 'demo-agent', '2.0.0')).toBeUndefined();
  });

  it('--dry-run prints the event, with --remove, --max-class and --mcp-names, and publishes nothing', async () => {
    const r = await as(g, g.tokens.admin)(
      'releases',
      'publish',
      'demo-agent@3.0.0',
      '--from',
      'demo-agent@1.0.0',
      '--remove',
      'demo/sleep',
      '--max-class',
      'shared-write',
      '--mcp-names',
      'upstream',
      '--dry-run',
    );
    expect(r.code, show(r)).toBe(0);
    const event = JSON.parse(r.stdout) as {
      type: string;
      data: { closure: { id: string }[]; policy: unknown; mcp?: unknown };
    };
    expect(event.type).toBe('AgentReleasePublished');
    expect(event.data.closure.map((t) => t.id)).not.toContain('demo/sleep');
    const base = g.gateway.registry.agentRelease('acme', 'demo-agent', '1.0.0')!.release;
    expect(event.data.closure).toHaveLength(base.closure.length - 1);
    expect(event.data.policy).toEqual({ maxClass: 'shared-write' });
    expect(event.data.mcp).toEqual({ toolNames: 'upstream' });
    expect(g.gateway.registry.agentRelease('acme', 'demo-agent', '3.0.0')).toBeUndefined();
    const bad = await as(g, g.tokens.admin)(
      'releases',
      'publish',
      'demo-agent@3.0.0',
      '--from',
      'demo-agent@1.0.0',
      '--mcp-names',
      'short',
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--mcp-names must be one of versioned, upstream; got "short"/);
  });
});

describe('gatehouse mcp reapprove ID TOOL --version', () => {
  let g: DemoGateway;
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    // The fixture reads its tools from a file in a temporary directory: no sandbox around it.
    g = await startDemoGateway({ listen: true, sandbox: { enabled: false } });
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-reapprove-'));
  });
  afterAll(async () => {
    await g?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the new version of a tool whose input schema changed', async () => {
    const admin = as(g, g.tokens.admin);
    const maintainer = as(g, g.tokens.maintainer);
    const greet = {
      name: 'greet',
      description: 'Says hello.',
      inputSchema: { type: 'object', properties: { who: { type: 'string' } } },
    };
    const config = join(dir, 'tools.json');
    writeFileSync(config, JSON.stringify({ tools: [greet] }));
    const added = await admin(
      'mcp',
      'add',
      'changing',
      '--stdio',
      'node',
      '--',
      buildFixture('changing-upstream'),
      config,
    );
    const id = /registered (\S+)/.exec(added.stdout)?.[1];
    expect(id, show(added)).toBeDefined();
    for (const args of [
      ['mcp', 'verify', id!],
      ['mcp', 'bind', id!, 'greet', '--class', 'read', '--as', 'fixture/greet@1.0.0'],
      ['mcp', 'activate', id!],
    ]) {
      // The admin registered the server; binding and re-approving are the maintainer's.
      const r = await maintainer(...args);
      expect(r.code, `${args.join(' ')}\n${show(r)}`).toBe(0);
    }

    const changed = {
      ...greet,
      inputSchema: {
        type: 'object',
        properties: { who: { type: 'string' }, cc: { type: 'string' } },
      },
    };
    writeFileSync(`${config}.next`, JSON.stringify({ tools: [changed] }));
    renameSync(`${config}.next`, config);
    const deadline = Date.now() + 20_000;
    const state = async () => (await g.gateway.mcp.get('acme', id!)).bindings[0]?.state;
    while ((await state()) !== 'unbound' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await state()).toBe('unbound');

    const refused = await admin('mcp', 'reapprove', id!, 'greet', '--version', '1.1.0');
    expect(refused.code, show(refused)).toBe(3);
    expect(refused.stderr).toContain('403 FORBIDDEN');
    const sameVersion = await maintainer('mcp', 'reapprove', id!, 'greet');
    expect(sameVersion.code, show(sameVersion)).toBe(3);
    expect(sameVersion.stderr).toContain('  at /version');

    const r = await maintainer('mcp', 'reapprove', id!, 'greet', '--version', '1.1.0');
    expect(r.code, show(r)).toBe(0);
    expect(r.stdout).toBe(
      're-approved greet: bound to fixture/greet@1.1.0 (input schema changed; new version published)\n',
    );
    expect(g.gateway.registry.tool('acme', 'fixture/greet', '1.1.0')?.stored.state).toBe('active');
  });
});
