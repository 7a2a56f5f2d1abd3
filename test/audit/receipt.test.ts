import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SigningKeyring,
  buildReceiptStatement,
  signEnvelope,
  signReceipt,
  verifyEnvelope,
  verifyReceipt,
} from '../../src/audit/index.js';
import type { ReceiptPredicate } from '../../src/audit/index.js';
import { IllegalStateError, ManualClock, canonicalJson, sha256Hex } from '../../src/core/index.js';

let dir: string;
let ring: SigningKeyring;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-receipt-'));
  ring = await SigningKeyring.open(path.join(dir, 'keys'), new ManualClock());
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const input = { path: '/repo/README.md', lines: [1, 20] };

// The request hash computed by hand from DESIGN §8, independently of core's requestHash.
const REQUEST_HASH = sha256Hex(
  canonicalJson({
    agent: { id: 'coder', version: '1.2.0' },
    environment: 'dev',
    input,
    project: 'site',
    tenant: 'acme',
    tool: { id: 'fs.read', version: '2.0.0' },
  }),
);

function predicate(over: Partial<ReceiptPredicate> = {}): ReceiptPredicate {
  return {
    invocationId: 'inv-1',
    tenant: 'acme',
    project: 'site',
    environment: 'dev',
    agent: { id: 'coder', version: '1.2.0' },
    tool: { id: 'fs.read', version: '2.0.0', descriptorDigest: 'ab'.repeat(32) },
    input,
    requestHash: REQUEST_HASH,
    idempotencyKey: 'idem-1',
    effectiveClass: 'read',
    status: 'succeeded',
    stages: [
      { stage: 'policy', decision: 'continue', reason: 'allowed', at: '2026-01-01T00:00:00.000Z' },
    ],
    approval: null,
    lease: null,
    outcome: { status: 'succeeded' },
    output: { sha256Full: 'cd'.repeat(32), sha256Sanitized: 'ef'.repeat(32), truncated: false },
    timestamps: {
      requestedAt: '2026-01-01T00:00:00.000Z',
      completedAt: '2026-01-01T00:00:01.000Z',
    },
    audit: { index: 41, treeSize: 42 },
    ...over,
  };
}

/** Re-signs a changed statement with the real key, so only the content checks can catch it. */
function resign(statement: unknown, payloadType = 'application/vnd.in-toto+json') {
  return signEnvelope(payloadType, Buffer.from(JSON.stringify(statement)), ring);
}

describe('receipts', () => {
  it('builds an in-toto Statement v1 with the invocation as its one subject', () => {
    const s = buildReceiptStatement(predicate());
    expect(s._type).toBe('https://in-toto.io/Statement/v1');
    expect(s.predicateType).toBe('https://gatehouse.dev/receipt/v1');
    expect(s.subject).toEqual([{ name: 'invocation/inv-1', digest: { sha256: REQUEST_HASH } }]);
  });

  it('refuses to build a receipt whose request hash does not recompute', () => {
    expect(() => buildReceiptStatement(predicate({ requestHash: '00'.repeat(32) }))).toThrow(
      IllegalStateError,
    );
  });

  it('signs the canonical JSON bytes and verifies', () => {
    const env = signReceipt(predicate(), ring);
    expect(env.payloadType).toBe('application/vnd.in-toto+json');
    expect(env.signatures[0]?.keyid).toBe(ring.activeKeyId);
    expect(Buffer.from(env.payload, 'base64').toString()).toBe(
      canonicalJson(buildReceiptStatement(predicate())),
    );
    const r = verifyReceipt(JSON.parse(JSON.stringify(env)), ring.jwks());
    expect(r.ok).toBe(true);
    expect(r.ok && r.statement.predicate.audit).toEqual({ index: 41, treeSize: 42 });
  });

  it('fails on a tampered payload', () => {
    const env = signReceipt(predicate(), ring);
    const statement = JSON.parse(Buffer.from(env.payload, 'base64').toString()) as {
      predicate: ReceiptPredicate;
    };
    statement.predicate.status = 'failed';
    const tampered = { ...env, payload: Buffer.from(JSON.stringify(statement)).toString('base64') };
    const r = verifyReceipt(tampered, ring.jwks());
    expect(!r.ok && r.reason).toMatch(/^bad signature/);
  });

  it('names a request hash that does not recompute, even when signed', () => {
    const s = buildReceiptStatement(predicate());
    const changedInput = { ...s, predicate: { ...s.predicate, input: { path: '/etc/passwd' } } };
    const r1 = verifyReceipt(resign(changedInput), ring.jwks());
    expect(!r1.ok && r1.reason).toMatch(/^subject digest .* does not match the request hash/);

    const other = '00'.repeat(32);
    const badPredicateHash = { ...s, predicate: { ...s.predicate, requestHash: other } };
    const r2 = verifyReceipt(resign(badPredicateHash), ring.jwks());
    expect(!r2.ok && r2.reason).toMatch(/^predicate.requestHash 0+ does not match/);
  });

  it('checks payload type, statement type, predicate type and the single subject', () => {
    const s = buildReceiptStatement(predicate());
    const subject = s.subject[0];
    const cases: [unknown, string, RegExp][] = [
      [s, 'application/json', /^payloadType is application\/json/],
      [{ ...s, _type: 'https://in-toto.io/Statement/v0.1' }, undefined as never, /_type/],
      [
        { ...s, predicateType: 'https://slsa.dev/provenance/v1' },
        undefined as never,
        /predicateType/,
      ],
      [{ ...s, subject: [subject, subject] }, undefined as never, /exactly one subject/],
      [{ ...s, subject: [] }, undefined as never, /exactly one subject/],
      [
        { ...s, subject: [{ ...subject, name: 'invocation/other' }] },
        undefined as never,
        /subject name/,
      ],
      ['not an object', undefined as never, /_type/],
    ];
    for (const [statement, type, reason] of cases) {
      const r = verifyReceipt(resign(statement, type), ring.jwks());
      expect(!r.ok && r.reason).toMatch(reason);
    }
    const notJson = signEnvelope('application/vnd.in-toto+json', Buffer.from('{'), ring);
    const r = verifyReceipt(notJson, ring.jwks());
    expect(!r.ok && r.reason).toBe('payload is not JSON');
  });

  it('still verifies after the key is rotated', async () => {
    const localDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-receipt-rot-'));
    try {
      const local = await SigningKeyring.open(localDir, new ManualClock());
      const env = signReceipt(predicate(), local);
      await local.rotate();
      expect(verifyReceipt(env, local.jwks()).ok).toBe(true);
      expect(verifyEnvelope(env, { keys: [] }).ok).toBe(false);
    } finally {
      await rm(localDir, { recursive: true, force: true });
    }
  });
});
