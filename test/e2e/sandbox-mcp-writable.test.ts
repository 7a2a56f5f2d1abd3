import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpTransport } from '../../src/mcp/index.js';
import { ROOT } from '../helpers/cli.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { requireInTest } from '../helpers/prerequisites.js';
import { publishAgent } from '../helpers/sandbox-tools.js';

/**
 * A sandboxed stdio upstream that must write: the official server-filesystem, whose write_file
 * needs its allowed directory writable, registered with that directory in `writableDirs`.
 */
const SERVER = `${ROOT}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
/** The sandbox user on the host (the default `sandboxUser`, `nobody`). */
const SANDBOX_UID = 65534;

let g: DemoGateway;
let scratch: string;
let shared: string;

beforeAll(async () => {
  g = await startDemoGateway();
  scratch = mkdtempSync(join(tmpdir(), 'gatehouse-writable-'));
  // The directory a server may write: the sandbox user's, as an operator would prepare it.
  shared = join(scratch, 'shared');
  mkdirSync(shared, { mode: 0o755 });
  chownSync(shared, SANDBOX_UID, SANDBOX_UID);
  // The sandbox user must reach it through its parent (mkdtemp makes that 0700).
  chmodSync(scratch, 0o755);
});
afterAll(async () => {
  await g?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function filesystem(writableDirs?: string[]): McpTransport {
  return {
    type: 'stdio',
    command: process.execPath,
    args: [SERVER, shared],
    ...(writableDirs ? { writableDirs } : {}),
  };
}

/** Registers, verifies, binds write_file as `descriptorId` and activates; returns an agent's token. */
async function writer(name: string, transport: McpTransport, descriptorId: string) {
  const server = await g.gateway.mcp.register('acme', 'admin', { name, transport });
  const verified = await g.gateway.mcp.verify('acme', server.id, 'admin');
  expect(verified.server.state, verified.server.stateReason ?? '').toBe('verified');
  const bound = await g.gateway.mcp.bind('acme', server.id, 'maintainer', {
    tool: 'write_file',
    class: 'workspace-write',
    descriptor: { id: descriptorId, version: '1.0.0' },
  });
  await g.gateway.mcp.activate('acme', server.id, 'admin');
  const token = await publishAgent(g, `${name}-agent`, [
    bound.descriptor as unknown as Record<string, unknown>,
  ]);
  return { server, token };
}

function writeCall(descriptorId: string, path: string, content: string): unknown {
  return {
    tool: { id: descriptorId, version: '1.0.0' },
    input: { path, content },
    environment: 'dev',
  };
}

describe('a sandboxed stdio upstream with writable directories', () => {
  it('server-filesystem writes into its declared directory, and cannot without it', async (ctx) => {
    requireInTest(ctx, 'the Linux sandbox', g.gateway.execution.sandboxProblem);
    const target = join(shared, 'note.txt');

    const granted = await writer('files', filesystem([shared]), 'files/write');
    expect(granted.server.sandboxed).toBe(true);
    expect(granted.server.transport).toMatchObject({ writableDirs: [shared] });
    const r = await g.invoke(
      granted.token,
      'write-1',
      writeCall('files/write', target, 'written from the sandbox'),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.status, JSON.stringify(r.body.error)).toBe('observed');
    expect(JSON.stringify(r.body.output)).toContain('Successfully wrote');
    expect(readFileSync(target, 'utf8')).toBe('written from the sandbox');
    // Written by the sandbox user, not by the gateway.
    expect(statSync(target).uid).toBe(SANDBOX_UID);

    // The same server without the declaration sees the directory read-only (EROFS).
    const denied = await writer('files-ro', filesystem(), 'files-ro/write');
    const other = join(shared, 'other.txt');
    const d = await g.invoke(denied.token, 'write-2', writeCall('files-ro/write', other, 'no'));
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(JSON.stringify(d.body.output)).toMatch(/EROFS|read-only file system/i);
    expect(() => statSync(other)).toThrow();
  });
});

describe('registering writable directories', () => {
  /** POST /v1/mcp-servers with `writableDirs`; the answer's status, message and pointer. */
  async function register(writableDirs: unknown) {
    const res = await g.inject<{ error: { code: string; message: string; details: unknown } }>(
      'POST',
      '/v1/mcp-servers',
      {
        token: g.tokens.admin,
        body: {
          name: 'bad-dirs',
          transport: { type: 'stdio', command: process.execPath, args: [SERVER], writableDirs },
        },
      },
    );
    return res;
  }

  it('refuses a path that is not an existing, real directory of its own, naming it and why', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'x');
    const link = join(scratch, 'link');
    symlinkSync(shared, link);
    const cases: [unknown, string, RegExp][] = [
      ['shared', '/transport/writableDirs', /must be an array/],
      [[1], '/transport/writableDirs', /must be an array of at most 16 absolute directory paths/],
      [['shared'], '/transport/writableDirs/0', /"shared"\) must be an absolute, normalised/],
      [[`${scratch}/x/../x`], '/transport/writableDirs/0', /must be an absolute, normalised/],
      [[shared, join(scratch, 'none')], '/transport/writableDirs/1', /does not exist .*create/],
      [[file], '/transport/writableDirs/0', /is not a directory/],
      [[link], '/transport/writableDirs/0', /symbolic link; give the real path ".*\/shared"/],
      [
        [join(g.dataDir, 'keys')],
        '/transport/writableDirs/0',
        /lies inside the gateway's data directory/,
      ],
      [[tmpdir()], '/transport/writableDirs/0', /contains the gateway's data directory/],
      [['/usr/lib'], '/transport/writableDirs/0', /lies inside the system directory \/usr/],
      [['/'], '/transport/writableDirs/0', /other than \//],
    ];
    for (const [dirs, pointer, message] of cases) {
      const res = await register(dirs);
      expect(res.status, JSON.stringify(dirs)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_INPUT');
      expect(res.body.error.details).toEqual({ pointer });
      expect(res.body.error.message, JSON.stringify(dirs)).toMatch(message);
    }
  });
});
