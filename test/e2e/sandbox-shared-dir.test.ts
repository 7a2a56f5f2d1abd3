import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { api, useServers } from '../helpers/cli.js';
import type { ServerProcess } from '../helpers/cli.js';

const { start, tempDir } = useServers();

/** Start-up may be slow on a loaded machine; the test is about what is reaped, not the time. */
const START_MS = 90_000;

/** The mount points under `dir`. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((point) => point.startsWith(`${dir}/`));
}

/** Directories named `name` up to three levels under `dir`. */
function dirsNamed(dir: string, name: string, depth = 3): string[] {
  if (depth === 0) return [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory())
    .flatMap((e) =>
      e.name === name ? [join(dir, e.name)] : dirsNamed(join(dir, e.name), name, depth - 1),
    );
}

describe('two gateways with different data directories sharing one GATEHOUSE_SANDBOX_DIR', () => {
  it(
    "never reap each other's live workspaces, at start or on a reaper pass",
    { timeout: 240_000 },
    async () => {
      const shared = tempDir('gh-sb-');
      const dirA = tempDir('gatehouse-shared-a-');
      const dirB = tempDir('gatehouse-shared-b-');
      let a: ServerProcess | undefined;
      let b: ServerProcess | undefined;
      try {
        a = await start(dirA, START_MS, { GATEHOUSE_SANDBOX_DIR: shared });
        const tokens = JSON.parse(
          readFileSync(join(dirA, 'demo-tokens.json'), 'utf8'),
        ) as DemoTokens;
        // An attempt's lease and workspace outlive its call (GATEHOUSE_ATTEMPT_TTL_MS, 30 min).
        const res = await api<InvocationRecord>(
          a.url,
          'POST',
          '/v1/invocations',
          tokens.agent,
          {
            tool: { id: 'demo/sh', version: '1.0.0' },
            input: { script: 'echo kept > note' },
            environment: 'dev',
            runId: 'run-1',
            attemptId: 'attempt-1',
          },
          'shared-sh',
        );
        expect(res.body.status, JSON.stringify(res.body.error)).toBe('observed');
        const workspaces = dirsNamed(shared, String(res.body.lease?.id));
        expect(workspaces).toHaveLength(1);
        expect(readFileSync(join(workspaces[0]!, 'note'), 'utf8')).toBe('kept\n');

        // B starts (reaping what it thinks a crash left) and runs reaper passes while A's lease lives.
        b = await start(dirB, START_MS, {
          GATEHOUSE_SANDBOX_DIR: shared,
          GATEHOUSE_REAP_INTERVAL_MS: '100',
        });
        await sleep(1_000);
        expect(readFileSync(join(workspaces[0]!, 'note'), 'utf8')).toBe('kept\n');
      } finally {
        await b?.kill('SIGTERM');
        await a?.kill('SIGTERM');
        // A keeps its attempt's workspace (a tmpfs) past its close, for its next start to reap; a
        // gateway killed while starting leaves its MCP server's.
        for (const mount of mountsUnder(shared)) spawnSync('umount', ['--lazy', mount]);
      }
    },
  );
});
