import { copyFileSync, cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { DemoTokens } from '../../src/app/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import type { ErrorBody } from '../helpers/gateway-fixture.js';
import { api, firstRunning, runCli, useServers } from '../helpers/cli.js';
import { freshPostgresDatabase, missingPostgres, queryPostgres } from '../helpers/postgres.js';
import { requireInTest, skipWithout } from '../helpers/prerequisites.js';
import { cgroupDirsNamed, processesMatching } from '../helpers/sandbox-tools.js';

const { start, tempDir } = useServers();

/** A sandboxed write call that runs until it is killed; its command line marks its processes. */
const mark = `sleep 120.${process.pid % 1000}`;
const sleepCall = {
  tool: { id: 'demo/sh', version: '1.0.0' },
  input: { script: mark },
  environment: 'dev',
};

/** The mount points of this host. */
const mountPoints = () =>
  readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '');

/** A short heartbeat and grace period, so the test sees a takeover in seconds. */
const nodeEnv = (url: string) => ({
  GATEHOUSE_DB: url,
  GATEHOUSE_NODE_HEARTBEAT_MS: '500',
  GATEHOUSE_NODE_GRACE_MS: '3000',
});

describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))(
  'a gateway node killed with SIGKILL among nodes on one PostgreSQL',
  () => {
    it('is taken over by a surviving node: its write call uncertain, a retry 409, nothing of its sandbox left on the host, the log intact', async (ctx) => {
      const url = await freshPostgresDatabase('nodes');
      const dirA = tempDir('gatehouse-node-a-');
      const a = await start(dirA, 60_000, nodeEnv(url));
      const ready = await api<{ sandbox: string }>(a.url, 'GET', '/readyz');
      requireInTest(
        ctx,
        'the Linux sandbox',
        ready.body.sandbox === 'ok' ? null : ready.body.sandbox,
      );
      // Node B shares A's keys (receipts and checkpoints verify with one key set) and the demo's
      // tokens; it has a data directory, and so a node id, of its own.
      const dirB = tempDir('gatehouse-node-b-');
      cpSync(join(dirA, 'keys'), join(dirB, 'keys'), { recursive: true });
      copyFileSync(join(dirA, 'demo-tokens.json'), join(dirB, 'demo-tokens.json'));
      const b = await start(dirB, 60_000, nodeEnv(url));
      const idA = readFileSync(join(dirA, 'node-id'), 'utf8').trim();
      const idB = readFileSync(join(dirB, 'node-id'), 'utf8').trim();
      expect(idA).not.toBe(idB);
      const tokens = JSON.parse(readFileSync(join(dirA, 'demo-tokens.json'), 'utf8')) as DemoTokens;
      const op = tokens.operator;
      const alive = await queryPostgres<{ id: string; status: string }>(
        url,
        'select id, status from nodes order by id',
      );
      expect(alive).toEqual(
        [
          { id: idA, status: 'alive' },
          { id: idB, status: 'alive' },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );

      // A write call runs on node A; node B sees it running (one database).
      const pending = api(a.url, 'POST', '/v1/invocations', tokens.agent, sleepCall, 'sleep-1');
      pending.catch(() => undefined);
      const running = await firstRunning<InvocationRecord>(b.url, op, 400, 50);
      expect(running?.tool.id).toBe('demo/sh');
      expect(running?.node).toBe(idA);
      const id = running!.id;
      const leaseId = String(running!.lease?.id);
      for (let i = 0; i < 250 && processesMatching(mark).length === 0; i++) await sleep(20);
      expect(processesMatching(mark).length).toBeGreaterThan(0);
      expect(cgroupDirsNamed(leaseId).length).toBeGreaterThan(0);

      await a.kill('SIGKILL');
      expect(a.child.signalCode).toBe('SIGKILL');
      await expect(pending).rejects.toThrow();

      // Node B takes it over once A's heartbeat is older than the grace period.
      let record: InvocationRecord | undefined;
      for (let i = 0; i < 600; i++) {
        record = (await api<InvocationRecord>(b.url, 'GET', `/v1/invocations/${id}`, op)).body;
        if (record.status !== 'running') break;
        await sleep(50);
      }
      expect(record?.status).toBe('uncertain');
      expect(record?.error?.code).toBe('NODE_LOST');
      expect(record?.error?.message).toContain(`The gateway node ${idA} stopped heartbeating`);
      expect(record?.trace.at(-1)?.reason).toContain(`by node ${idB}`);
      // B shares A's host: what A's sandbox left there goes with the takeover, not at A's restart.
      for (let i = 0; i < 250 && cgroupDirsNamed(leaseId).length > 0; i++) await sleep(20);
      expect(cgroupDirsNamed(leaseId)).toEqual([]);
      expect(processesMatching(mark)).toEqual([]);
      // The workspace goes after the cgroups (the sandbox's leftovers, then the workspaces').
      for (let i = 0; i < 250 && mountPoints().some((m) => m.includes(leaseId)); i++)
        await sleep(20);
      expect(mountPoints().filter((m) => m.includes(leaseId))).toEqual([]);
      const nodes = await queryPostgres<{ id: string; status: string; claimed_by: string | null }>(
        url,
        'select id, status, claimed_by from nodes order by id',
      );
      expect(nodes.find((n) => n.id === idA)).toEqual({
        id: idA,
        status: 'claimed',
        claimed_by: idB,
      });

      // The effect is in doubt: the same request is refused until an operator resolves it.
      const retry = await api<ErrorBody>(
        b.url,
        'POST',
        '/v1/invocations',
        tokens.agent,
        sleepCall,
        'sleep-1',
      );
      expect(retry.status).toBe(409);
      expect(retry.body.error.code).toBe('EFFECT_UNCERTAIN');
      expect(retry.body.error.details.invocation).toBe(id);

      const receipt = await api(b.url, 'GET', `/v1/invocations/${id}/receipt`, op);
      expect(receipt.status).toBe(200);
      const stuck = await queryPostgres<{ n: string }>(
        url,
        `select count(*) as n from invocations where status = 'running'`,
      );
      expect(Number(stuck[0]!.n)).toBe(0);

      // B stops cleanly: it deregisters, and the log verifies.
      await b.kill('SIGTERM');
      const after = await queryPostgres<{ id: string; status: string }>(
        url,
        `select id, status from nodes where id = '${idB}'`,
      );
      expect(after).toEqual([{ id: idB, status: 'stopped' }]);
      const verified = await runCli(['audit', 'verify', '--data', dirB, '--db', url]);
      expect(verified.stderr).toBe('');
      expect(verified.code).toBe(0);
      expect(verified.stdout).toMatch(/tenant acme: OK, \d+ records/);
      // Two gateways start on a machine shared with other work: more than the default minute.
    }, 240_000);
  },
);
