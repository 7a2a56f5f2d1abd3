import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt, runCli } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { connectMcp } from '../helpers/mcp-client.js';

let g: DemoGateway;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  ensureBuilt();
  g = await startDemoGateway({ listen: true });
  env = { GATEHOUSE_URL: g.url!, GATEHOUSE_TOKEN: g.tokens.admin };
});
afterAll(async () => {
  await g?.close();
});

async function cli(...args: string[]): Promise<string> {
  return cliAs(env, ...args);
}

async function cliAs(as: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  const r = await runCli(args, as);
  expect(r.code, `${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('the README flow for an upstream MCP server, with the gatehouse CLI', () => {
  it('registers (a relative path made absolute), verifies, binds, activates, and an agent calls it via /mcp', async () => {
    const added = await cli(
      'mcp',
      'add',
      'mine',
      '--stdio',
      'node',
      '--',
      'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
      'stdio',
    );
    const id = /registered (\S+) \(registered\)/.exec(added)?.[1];
    expect(id, added).toBeDefined();
    const stored = (await g.gateway.mcp.get('acme', id!)).server.transport;
    expect(stored).toMatchObject({
      command: 'node',
      args: [`${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`, 'stdio'],
    });

    await cli('mcp', 'verify', id!);
    // The admin registered it; binding a tool with its class is the maintainer's (DESIGN §5).
    const maintainer = { ...env, GATEHOUSE_TOKEN: g.tokens.maintainer };
    await cliAs(
      maintainer,
      'mcp',
      'bind',
      id!,
      'get-sum',
      '--class',
      'read',
      '--as',
      'mine/sum@1.0.0',
    );
    await cli('mcp', 'activate', id!);
    expect(await cli('mcp', 'show', id!)).toMatch(/active/);

    // The demo agent's release does not hold mine/sum: publish one that does, with a principal
    // of it, and call it through /mcp as that agent.
    const published = await cli(
      'releases',
      'publish',
      'cli-agent@1.0.0',
      '--add',
      'mine/sum@1.0.0',
      '--max-class',
      'read',
    );
    expect(published).toMatch(/^cli-agent@1\.0\.0: applied, 1 tools, maxClass read/);
    const token = (
      JSON.parse(
        await cli(
          'principals',
          'add',
          'cli-agent',
          '--role',
          'agent',
          '--project',
          'web',
          '--agent',
          'cli-agent@1.0.0',
        ),
      ) as { token: string }
    ).token;
    const { client } = await connectMcp(`${g.url!}/mcp`, token);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['mine_sum__1_0_0']);
      const r = await client.callTool({
        name: 'mine_sum__1_0_0',
        arguments: { a: 2, b: 40 },
      });
      expect(r._meta?.['gatehouse/status']).toBe('observed');
      expect(JSON.stringify(r.content)).toContain('42');
    } finally {
      await client.close();
    }
  });
});

describe('registering a stdio server by a relative path', () => {
  it('is refused naming the word, its absolute path and why; nothing is stored', async () => {
    const before = await g.gateway.mcp.list('acme');
    const res = await g.inject<{ error: { code: string; message: string; details: unknown } }>(
      'POST',
      '/v1/mcp-servers',
      {
        token: g.tokens.admin,
        body: {
          name: 'rel',
          transport: {
            type: 'stdio',
            command: 'node',
            args: ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'],
          },
        },
      },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_INPUT');
    expect(res.body.error.details).toEqual({ pointer: '/transport/args/0' });
    expect(res.body.error.message).toContain(
      `give its absolute path (${process.cwd()}/node_modules/@modelcontextprotocol/server-everything/dist/index.js)`,
    );
    expect(await g.gateway.mcp.list('acme')).toEqual(before);
  });
});
