import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../src/audit/index.js';
import type { JwkSet } from '../../src/audit/index.js';
import type { DemoTokens } from '../../src/app/index.js';
import { InvocationStatus } from '../../src/invocation/index.js';
import type { InvocationRecord } from '../../src/invocation/index.js';
import type { ErrorBody } from '../helpers/gateway-fixture.js';
import { api, firstRunning, runCli, useServers } from '../helpers/cli.js';
import { storedRowsOf } from '../helpers/stored-rows.js';

const { start, tempDir } = useServers();

const sleepCall = {
  tool: { id: 'demo/sleep', version: '1.0.0' },
  input: { ms: 60_000 },
  environment: 'dev',
};

describe('a Gatehouse killed with SIGKILL while a call runs', () => {
  it('restarts with the call uncertain, receipted, not retryable, and the log intact', async () => {
    const dir = tempDir('gatehouse-crash-');
    const first = await start(dir);
    const tokens = JSON.parse(readFileSync(join(dir, 'demo-tokens.json'), 'utf8')) as DemoTokens;

    // Fire the long call and do not wait: the kill ends its connection.
    const pending = api(first.url, 'POST', '/v1/invocations', tokens.agent, sleepCall, 'sleep-1');
    pending.catch(() => undefined);
    const running = await firstRunning<InvocationRecord>(first.url, tokens.operator, 200, 50);
    expect(running?.tool.id).toBe('demo/sleep');
    const sleepId = running!.id;

    const echoes = Array.from({ length: 5 }, (_, i) =>
      api(
        first.url,
        'POST',
        '/v1/invocations',
        tokens.agent,
        {
          tool: { id: 'demo/echo', version: '1.0.0' },
          input: { message: `e${i}` },
          environment: 'dev',
        },
        `echo-${i}`,
      ),
    );
    for (const e of echoes) e.catch(() => undefined);
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');
    await expect(pending).rejects.toThrow();

    // What the crash left is already a valid log.
    const afterCrash = await runCli(['audit', 'verify', '--data', dir]);
    expect(afterCrash.stderr).toBe('');
    expect(afterCrash.code).toBe(0);

    const second = await start(dir);
    // Printed right after the listening line, possibly in a later chunk.
    for (let i = 0; i < 100 && !second.output().includes('were running'); i++) await sleep(20);
    expect(second.output()).toContain('1 invocation(s) were running when Gatehouse stopped');
    const op = tokens.operator;

    const record = await api<InvocationRecord>(second.url, 'GET', `/v1/invocations/${sleepId}`, op);
    expect(record.status).toBe(200);
    expect(record.body.status).toBe('uncertain');
    expect(record.body.error?.code).toBe('GATEWAY_RESTARTED');
    const trace = record.body.trace;
    const restart = trace.find((t) => t.stage === 'execute');
    expect(restart?.decision).toBe('uncertain');
    expect(restart?.reason).toMatch(/Gatehouse stopped while this call was running/);
    expect(trace.at(-1)).toMatchObject({ stage: 'audit', decision: 'recorded' });

    const uncertainList = await api<{ invocations: InvocationRecord[] }>(
      second.url,
      'GET',
      '/v1/invocations?status=uncertain',
      op,
    );
    expect(uncertainList.body.invocations.map((r) => r.id)).toEqual([sleepId]);

    const jwks = (await api<JwkSet>(second.url, 'GET', '/v1/receipt-keys')).body;
    const receipt = await api(second.url, 'GET', `/v1/invocations/${sleepId}/receipt`, op);
    expect(receipt.status).toBe(200);
    const verdict = verifyReceipt(receipt.body, jwks);
    if (!verdict.ok) throw new Error(verdict.reason);
    expect(verdict.statement.predicate.status).toBe('uncertain');
    expect(verdict.statement.predicate.outcome.error?.code).toBe('GATEWAY_RESTARTED');
    const auditRecord = await api<{ record: unknown }>(
      second.url,
      'GET',
      `/v1/audit/records/${verdict.statement.predicate.audit.index}`,
      op,
    );
    expect(auditRecord.body.record).toMatchObject({
      type: 'invocation.uncertain',
      subject: `invocation/${sleepId}`,
    });

    const retry = await api<ErrorBody>(
      second.url,
      'POST',
      '/v1/invocations',
      tokens.agent,
      sleepCall,
      'sleep-1',
    );
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('EFFECT_UNCERTAIN');
    expect(retry.body.error.details.invocation).toBe(sleepId);

    await second.kill('SIGTERM');

    // Every stored invocation is in a state of DESIGN §9, none still running; echoes that made
    // it to disk did so with their outcome.
    const rows = await storedRowsOf<{ id: string; status: string; record: string }>(
      dir,
      'SELECT id, status, record FROM invocations',
    );
    const states = Object.values(InvocationStatus) as string[];
    expect(rows.length).toBeGreaterThanOrEqual(1);
    for (const row of rows) {
      expect(states).toContain(row.status);
      expect(row.status).not.toBe('running');
      expect((JSON.parse(row.record) as { status: string }).status).toBe(row.status);
      if (row.id !== sleepId) expect(row.status).toBe('observed');
    }

    const verified = await runCli(['audit', 'verify', '--data', dir]);
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/tenant acme: OK/);
  });
});
