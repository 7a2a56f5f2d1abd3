import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpServerRecord, McpTransport } from '../../../src/mcp/index.js';
import { dieWithGateway, setprivHasPdeathsig } from '../../../src/mcp/upstream/die-with-gateway.js';
import { UpstreamPool } from '../../../src/mcp/upstream/pool.js';
import { McpHarness, TENANT, until } from '../mcp-harness.js';

let h: McpHarness | undefined;
let pool: UpstreamPool | undefined;
afterEach(async () => {
  await pool?.close();
  await h?.close();
  pool = undefined;
  h = undefined;
});

function record(id: string, transport: McpTransport): McpServerRecord {
  const at = new Date().toISOString();
  return {
    id,
    tenant: TENANT,
    name: id,
    transport,
    identity: id,
    state: 'active',
    stateReason: null,
    version: 1,
    registeredBy: 'test',
    createdAt: at,
    updatedAt: at,
  };
}

describe('the upstream pool', () => {
  it('reports the loss of an open connection, never a server that died during its handshake', async () => {
    h = await McpHarness.open();
    const lost: string[] = [];
    pool = new UpstreamPool({
      connectTimeoutMs: 5_000,
      maxMessageBytes: 1024 * 1024,
      baseBackoffMs: 1,
      maxBackoffMs: 5,
      onListChanged: () => undefined,
      onLost: (server) => lost.push(server.id),
      now: () => Date.now(),
    });
    const refusing = record('refusing', h.upstream({ tools: [], refuseStart: true }).transport);
    await expect(pool.get(refusing)).rejects.toThrow(/MCP handshake failed/);
    // The process is gone by now; its end was a failed attempt, not a loss.
    await new Promise((r) => setTimeout(r, 100));
    expect(lost).toEqual([]);

    const live = record('live', h.upstream({ tools: [] }).transport);
    const { conn } = await pool.get(live);
    process.kill(conn.pid!, 'SIGKILL');
    await until(() => lost.length > 0);
    expect(lost).toEqual(['live']);
    expect(pool.peek('live')).toBeNull();
  });
});

describe('an unsandboxed stdio server dies with the gateway', () => {
  it('behind setpriv --pdeathsig only where setpriv knows the option, asking it once', async () => {
    h = await McpHarness.open();
    // A util-linux older than 2.33: its help lacks --pdeathsig, and it would reject the option.
    const old = join(h.dir, 'old-setpriv');
    const asked = join(h.dir, 'asked');
    writeFileSync(
      old,
      `#!/bin/sh\necho asked >> ${asked}\necho 'Usage: setpriv [options] <program> [<argument>...]'\necho ' --nnp, --no-new-privs       disallow granting new privileges'\n`,
    );
    chmodSync(old, 0o755);
    expect(await dieWithGateway('node', ['server.js'], old)).toEqual({
      command: 'node',
      args: ['server.js'],
    });
    expect(await dieWithGateway('node', ['other.js'], old)).toEqual({
      command: 'node',
      args: ['other.js'],
    });
    expect(readFileSync(asked, 'utf8')).toBe('asked\n');
    expect(await dieWithGateway('node', [], join(h.dir, 'no-such-setpriv'))).toEqual({
      command: 'node',
      args: [],
    });

    const recent = join(h.dir, 'recent-setpriv');
    writeFileSync(recent, `#!/bin/sh\necho ' --pdeathsig keep|clear|<signame>'\n`);
    chmodSync(recent, 0o755);
    expect(await setprivHasPdeathsig(recent)).toBe(true);
    expect(await dieWithGateway('node', ['server.js'], recent)).toEqual({
      command: recent,
      args: ['--pdeathsig', 'KILL', '--', 'node', 'server.js'],
    });
  });
});
