import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationRecord } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';
import { auditRecords, leaseRows, publishAgent, shTool } from '../helpers/sandbox-tools.js';
import { storedRowsOf } from '../helpers/stored-rows.js';

// Long enough that the calls before the first reaper pass (slow on a loaded machine) stay within it.
const ATTEMPT_TTL_MS = 6_000;

let g: DemoGateway;
let agent: string;
let agentId: string;
let repo: string;

beforeAll(async () => {
  // A short attempt lease, and no periodic reaper pass during the test: the test runs it.
  g = await startDemoGateway({
    sandbox: {
      attemptTtlMs: ATTEMPT_TTL_MS,
      reapIntervalMs: 3_600_000,
      idleAttemptsPerAgent: 2,
      // Idle attempt leases count toward the agent's quota: room for the attempts the tests keep.
      pool: {
        leases: 8,
        cpus: 8,
        memoryBytes: 8 * 1024 ** 3,
        quotas: { tenantLeases: 8, agentLeases: 4 },
      },
    },
  });
  repo = g.gateway.config.sandbox.repositories.demo!;
  agent = await publishAgent(g, 'worktree-agent', [
    shTool(
      'test/worktree-sh',
      { sandbox: { worktree: { repository: 'demo', ref: 'HEAD' } } },
      {
        env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' },
      },
    ),
  ]);
  agentId = g.gateway.directory.authenticate(agent)!.id;
});

afterAll(async () => {
  await g?.close();
});

function git(...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
}

let n = 0;
async function attemptCall(
  token: string,
  runId: string,
  attemptId: string,
  script: string,
): Promise<InvocationRecord> {
  n += 1;
  const res = await g.invoke(token, `wt-${n}`, {
    ...(call('test/worktree-sh', { script }) as object),
    runId,
    attemptId,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function inAttempt(attemptId: string, script: string): Promise<InvocationRecord> {
  const r = await attemptCall(agent, 'run-1', attemptId, script);
  expect(r.status, JSON.stringify(r.error)).toBe('observed');
  return r;
}

const stdout = (r: InvocationRecord) => (r.output as { stdout: string }).stdout;

describe('git worktrees', () => {
  it('demo/git-log shows the latest commits of the demo repository from its own worktree', async () => {
    const res = await g.invoke(g.tokens.agent, 'git-log-2', call('demo/git-log', { count: 2 }));
    const r = res.body;
    expect(r.status).toBe('observed');
    const subjects = git('log', '--format=%s', '-n', '2').trim().split('\n');
    expect(subjects).toEqual(['Greet the whole world', 'Add the app']);
    const lines = stdout(r).trim().split('\n');
    expect(lines.map((l) => l.replace(/^[0-9a-f]+ /, ''))).toEqual(subjects);
    expect(r.lease).toMatchObject({
      holder: `invocation/${r.id}`,
      worktree: { repository: 'demo', ref: 'HEAD' },
    });
    // A per-invocation worktree is gone with its call.
    const leaseId = String(r.lease?.id);
    expect(existsSync(join(g.sandboxRoot, 'workspaces', leaseId))).toBe(false);
    expect(git('worktree', 'list')).not.toContain(leaseId);
  });

  it('the calls of one attempt share a lease and worktree; another attempt gets its own; the reaper removes it when it expires', async () => {
    const a1 = await inAttempt('attempt-a', 'echo from-first > note.txt; git log --format=%s -n 1');
    expect(stdout(a1)).toBe('Greet the whole world\n');
    const a2 = await inAttempt('attempt-a', 'cat note.txt; git status --porcelain');
    expect(stdout(a2)).toBe('from-first\n?? note.txt\n');
    const b1 = await inAttempt('attempt-b', 'cat note.txt 2>/dev/null || echo no-note');
    expect(stdout(b1)).toBe('no-note\n');

    const leaseA = String(a1.lease?.id);
    const leaseB = String(b1.lease?.id);
    expect(a2.lease?.id).toBe(leaseA);
    expect(leaseB).not.toBe(leaseA);
    expect(a1.lease).toMatchObject({
      holder: `attempt/${agentId}/run-1/attempt-a`,
      worktree: { repository: 'demo', ref: 'HEAD' },
    });
    expect(b1.lease?.holder).toBe(`attempt/${agentId}/run-1/attempt-b`);

    // Between calls the attempt's worktree stays, registered with the repository.
    const workspaceA = join(g.sandboxRoot, 'workspaces', leaseA);
    const workspaceB = join(g.sandboxRoot, 'workspaces', leaseB);
    expect(existsSync(join(workspaceA, 'note.txt'))).toBe(true);
    expect(existsSync(workspaceB)).toBe(true);
    expect(git('worktree', 'list')).toContain(workspaceA);
    expect((await leaseRows(g)).find((l) => l.id === leaseA)?.status).toBe('active');

    // Not expired yet: a reaper pass leaves both alone.
    expect(await g.gateway.execution.reaper!.runOnce()).toEqual([]);
    expect(existsSync(workspaceA)).toBe(true);

    await new Promise((resolve) => setTimeout(resolve, ATTEMPT_TTL_MS + 100));
    const reaped = await g.gateway.execution.reaper!.runOnce();
    expect(reaped.sort()).toEqual([leaseA, leaseB].sort());
    for (const [leaseId, dir] of [
      [leaseA, workspaceA],
      [leaseB, workspaceB],
    ] as const) {
      expect(existsSync(dir)).toBe(false);
      expect(git('worktree', 'list')).not.toContain(leaseId);
      expect((await leaseRows(g)).find((l) => l.id === leaseId)?.status).toBe('reaped');
      const record = (await auditRecords(g)).find(
        (a) => a.type === 'lease.reaped' && a.subject === `lease/${leaseId}`,
      );
      expect(record?.data.reason).toMatch(/^expired at /);
    }
  });
});

describe('attempts of different agents', () => {
  it("another agent naming the same runId and attemptId never reaches the first agent's workspace: it is refused, naming the ids and not whose they are", async () => {
    // A second principal of the same agent release, in the same tenant and project.
    const other = await g.gateway.directory.addPrincipal(
      {
        tenant: 'acme',
        name: 'worktree-agent-2',
        roles: ['agent'],
        project: 'web',
        agent: { id: 'worktree-agent', version: '1.0.0' },
      },
      'test',
    );
    const mine = await attemptCall(agent, 'run-shared', 'attempt-1', 'echo secret-of-a > mine.txt');
    expect(mine.status, JSON.stringify(mine.error)).toBe('observed');

    const theirs = await attemptCall(
      other.token,
      'run-shared',
      'attempt-1',
      'cat mine.txt 2>/dev/null || echo no-file',
    );
    expect(JSON.stringify(theirs)).not.toContain('secret-of-a');
    expect(theirs.status).toBe('failed');
    expect(theirs.error?.code).toBe('ATTEMPT_IDS_IN_USE');
    expect(theirs.error?.message).toContain('"run-shared"');
    expect(theirs.error?.message).toContain('"attempt-1"');
    expect(theirs.error?.message).not.toContain(agentId);
    expect(theirs.error?.message).not.toContain('worktree-agent');
    expect(theirs.lease).toBeNull();

    // Other ids work for the second agent, in a workspace of its own.
    const own = await attemptCall(
      other.token,
      'run-shared',
      'attempt-2',
      'cat mine.txt 2>/dev/null || echo no-file',
    );
    expect(own.status, JSON.stringify(own.error)).toBe('observed');
    expect((own.output as { stdout: string }).stdout).toBe('no-file\n');

    // The first agent's attempt is untouched.
    const again = await attemptCall(agent, 'run-shared', 'attempt-1', 'cat mine.txt');
    expect((again.output as { stdout: string }).stdout).toBe('secret-of-a\n');
    expect(again.lease?.id).toBe(mine.lease?.id);
  });

  it('ids that differ only in where a slash falls are different attempts', async () => {
    const a = await attemptCall(agent, 'run/x', 'y', 'echo in-first > f.txt');
    expect(a.status, JSON.stringify(a.error)).toBe('observed');
    const b = await attemptCall(agent, 'run', 'x/y', 'cat f.txt 2>/dev/null || echo no-file');
    expect(b.status, JSON.stringify(b.error)).toBe('observed');
    expect((b.output as { stdout: string }).stdout).toBe('no-file\n');
    expect(b.lease?.id).not.toBe(a.lease?.id);
  });
});

describe('a gateway that stops', () => {
  it('ends its attempt leases: no workspace, mount or worktree of them is left, and they are released', async () => {
    const r = await inAttempt('attempt-stop', 'echo kept > note.txt');
    const leaseId = String(r.lease?.id);
    const workspaces = join(g.sandboxRoot, 'workspaces');
    const workspace = join(workspaces, leaseId);
    expect(existsSync(join(workspace, 'note.txt'))).toBe(true);
    await g.stop();
    expect(existsSync(workspace)).toBe(false);
    const mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[1] ?? '');
    expect(mounts.filter((m) => m.startsWith(workspaces))).toEqual([]);
    expect(git('worktree', 'list')).not.toContain(leaseId);
    const rows = await storedRowsOf<{ status: string }>(
      g.dataDir,
      'SELECT status FROM leases WHERE id = ?',
      leaseId,
    );
    expect(rows).toEqual([{ status: 'released' }]);
  });
});
