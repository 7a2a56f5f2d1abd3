import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leafHash, verifyConsistency, verifyInclusion } from '../../src/audit/index.js';
import type { Checkpoint, ConsistencyAnswer, InclusionAnswer } from '../../src/audit/index.js';
import type { AuditRecordDraft } from '../../src/core/index.js';
import { startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway, ErrorBody } from '../helpers/gateway-fixture.js';
import { rootHash } from '../audit/merkle-reference.js';

// One gateway for both tests, started in the hook: its start is most of a test's time on a busy
// machine. The first test only reads; the second appends to the log and reads its new size.
let d: DemoGateway;
beforeAll(async () => {
  d = await startDemoGateway();
});
afterAll(async () => {
  await d.close();
});

const b64 = (s: string): Buffer => Buffer.from(s, 'base64');

async function checkpoint(d: DemoGateway): Promise<Checkpoint> {
  const res = await d.inject<Checkpoint>('GET', '/v1/audit/checkpoint', {
    token: d.tokens.operator,
  });
  expect(res.status).toBe(200);
  return res.body;
}

describe('GET /v1/audit/proof and /v1/audit/consistency', () => {
  it('refuse every out-of-range or malformed parameter with a 400 that names it', async () => {
    const n = (await checkpoint(d)).treeSize;
    expect(n).toBeGreaterThan(3);
    const huge = '99999999999999999999';
    const cases: [query: string, parameter: string][] = [
      ['/v1/audit/proof', 'index'],
      ['/v1/audit/proof?index=-1', 'index'],
      ['/v1/audit/proof?index=1.5', 'index'],
      ['/v1/audit/proof?index=abc', 'index'],
      ['/v1/audit/proof?index=1e3', 'index'],
      [`/v1/audit/proof?index=${huge}`, 'index'],
      ['/v1/audit/proof?index=9007199254740993', 'index'],
      ['/v1/audit/proof?index=1&index=2', 'index'],
      [`/v1/audit/proof?index=${n}`, 'index'],
      ['/v1/audit/proof?index=3&size=3', 'index'],
      ['/v1/audit/proof?index=0&size=0', 'size'],
      [`/v1/audit/proof?index=0&size=${n + 1}`, 'size'],
      ['/v1/audit/proof?index=0&size=-5', 'size'],
      [`/v1/audit/proof?index=0&size=${huge}`, 'size'],
      ['/v1/audit/consistency?to=2', 'from'],
      ['/v1/audit/consistency?from=1', 'to'],
      ['/v1/audit/consistency?from=0&to=2', 'from'],
      ['/v1/audit/consistency?from=3&to=2', 'from'],
      [`/v1/audit/consistency?from=1&to=${n + 1}`, 'to'],
      [`/v1/audit/consistency?from=${huge}&to=2`, 'from'],
      ['/v1/audit/consistency?from=1&to=2.0', 'to'],
      [`/v1/audit/consistency?from=1&to=${huge}`, 'to'],
    ];
    for (const [url, parameter] of cases) {
      const res = await d.inject<ErrorBody>('GET', url, { token: d.tokens.operator });
      expect([url, res.status, res.body.error.code]).toEqual([url, 400, 'INVALID_INPUT']);
      expect([url, res.body.error.message]).toEqual([
        url,
        expect.stringMatching(new RegExp(`^(Query parameter )?${parameter}\\b`)),
      ]);
      expect([url, res.body.error.details.parameter]).toEqual([url, parameter]);
    }
    // The edges of the ranges are accepted.
    for (const url of [
      `/v1/audit/proof?index=${n - 1}`,
      `/v1/audit/proof?index=0&size=1`,
      `/v1/audit/consistency?from=${n}&to=${n}`,
      `/v1/audit/consistency?from=1&to=${n}`,
    ]) {
      expect([url, (await d.inject('GET', url, { token: d.tokens.operator })).status]).toEqual([
        url,
        200,
      ]);
    }
  });

  it('prove records of a 20k-record log, at its size and at earlier ones', async () => {
    const early = await checkpoint(d);
    const draft = (n: number): AuditRecordDraft => ({
      tenant: 'acme',
      type: 'test.filled',
      subject: `fill/${n}`,
      at: '2026-01-01T00:00:00.000Z',
      actor: 'system',
      data: { n },
    });
    // Past 2^14, so paths cross 15 levels; the reference below hashes every leaf, so not larger.
    for (let n = 0; n < 20_000; n += 5_000) {
      await d.gateway.auditLog.append(Array.from({ length: 5_000 }, (_, i) => draft(n + i)));
    }
    const late = await checkpoint(d);
    const size = late.treeSize;
    expect(size).toBe(early.treeSize + 20_000);

    // The reference: every leaf hashed from the stored bytes, roots by the RFC's recursion.
    const records = await d.gateway.storage.audit.records('acme', 0, size);
    const leaves = records.map((r) => leafHash(Buffer.from(r.record, 'utf8')));
    expect(late.rootHash).toBe(rootHash(leaves).toString('base64'));
    expect(early.rootHash).toBe(rootHash(leaves, early.treeSize).toString('base64'));

    const historical = 14_001;
    const historicalRoot = rootHash(leaves, historical);
    for (const [index, treeSize, root] of [
      [0, size, b64(late.rootHash)],
      [16_384, size, b64(late.rootHash)],
      [17_777, size, b64(late.rootHash)],
      [size - 1, size, b64(late.rootHash)],
      [1, historical, historicalRoot],
      [historical - 1, historical, historicalRoot],
    ] as const) {
      const res = await d.inject<InclusionAnswer>(
        'GET',
        `/v1/audit/proof?index=${index}&size=${treeSize}`,
        { token: d.tokens.operator },
      );
      expect(res.status).toBe(200);
      const a = res.body;
      expect(a).toMatchObject({ index, treeSize, rootHash: root.toString('base64') });
      expect(b64(a.leafHash)).toEqual(leaves[index]);
      expect(a.proof.length).toBeLessThanOrEqual(15);
      expect(verifyInclusion(leaves[index]!, index, treeSize, a.proof.map(b64), root)).toBe(true);
    }

    for (const [from, to, fromRoot, toRoot] of [
      [early.treeSize, size, b64(early.rootHash), b64(late.rootHash)],
      [2_345, historical, rootHash(leaves, 2_345), historicalRoot],
    ] as const) {
      const res = await d.inject<ConsistencyAnswer>(
        'GET',
        `/v1/audit/consistency?from=${from}&to=${to}`,
        { token: d.tokens.operator },
      );
      expect(res.status).toBe(200);
      const c = res.body;
      expect([c.fromRoot, c.toRoot]).toEqual([
        fromRoot.toString('base64'),
        toRoot.toString('base64'),
      ]);
      expect(verifyConsistency(from, to, c.proof.map(b64), fromRoot, toRoot)).toBe(true);
    }
  });
});
