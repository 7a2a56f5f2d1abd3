import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SigningKeyring,
  leafHash,
  signCheckpoint,
  verifyCheckpoint,
  verifyWithJwks,
} from '../../src/audit/index.js';
import { ManualClock } from '../../src/core/index.js';
import { rootHash } from './merkle-reference.js';

let dir: string;
let ring: SigningKeyring;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-checkpoint-'));
  ring = await SigningKeyring.open(dir, new ManualClock());
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const root = rootHash([leafHash(Buffer.from('a')), leafHash(Buffer.from('b'))]);
const head = { tenant: 'acme', treeSize: 2, rootHash: root, timestamp: '2026-01-01T00:00:00.000Z' };

describe('checkpoints', () => {
  it('signs the canonical JSON of {rootHash, tenant, timestamp, treeSize}', () => {
    const cp = signCheckpoint(head, ring);
    expect(cp).toMatchObject({
      tenant: 'acme',
      treeSize: 2,
      rootHash: root.toString('base64'),
      timestamp: head.timestamp,
      keyid: ring.activeKeyId,
    });
    const signed = Buffer.from(
      `{"rootHash":"${root.toString('base64')}","tenant":"acme","timestamp":"${head.timestamp}","treeSize":2}`,
    );
    expect(verifyWithJwks(ring.jwks(), cp.keyid, signed, Buffer.from(cp.signature, 'base64'))).toBe(
      true,
    );
    expect(verifyCheckpoint(JSON.parse(JSON.stringify(cp)), ring.jwks())).toBe(true);
  });

  it('fails when any signed field changes, or the key is unknown', () => {
    const cp = signCheckpoint(head, ring);
    const otherRoot = Buffer.from(root);
    otherRoot[0] = (otherRoot[0] as number) ^ 1;
    expect(verifyCheckpoint({ ...cp, treeSize: 3 }, ring.jwks())).toBe(false);
    expect(verifyCheckpoint({ ...cp, tenant: 'other' }, ring.jwks())).toBe(false);
    expect(verifyCheckpoint({ ...cp, timestamp: '2026-01-02T00:00:00.000Z' }, ring.jwks())).toBe(
      false,
    );
    expect(verifyCheckpoint({ ...cp, rootHash: otherRoot.toString('base64') }, ring.jwks())).toBe(
      false,
    );
    expect(verifyCheckpoint(cp, { keys: [] })).toBe(false);
  });

  it('answers false for malformed checkpoints without throwing', () => {
    const cp = signCheckpoint(head, ring);
    for (const bad of [
      null,
      'x',
      { ...cp, treeSize: '2' },
      { ...cp, treeSize: -1 },
      { ...cp, signature: 5 },
    ]) {
      expect(verifyCheckpoint(bad, ring.jwks())).toBe(false);
    }
  });
});
