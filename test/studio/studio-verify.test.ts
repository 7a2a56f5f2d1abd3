import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  leafHash as serverLeafHash,
  pae as serverPae,
  signCheckpoint,
  verifyInclusion as serverVerifyInclusion,
} from '../../src/audit/index.js';
import type { Signer } from '../../src/audit/index.js';
import { requestHash as serverRequestHash } from '../../src/core/index.js';
import type { RequestHashInput } from '../../src/core/index.js';
import { fromBase64 } from '../../studio/src/verify/bytes.js';
import { leafHash, verifyInclusion } from '../../studio/src/verify/merkle.js';
import { checkpointMessage, pae, requestHash } from '../../studio/src/verify/receipt-bytes.js';

/**
 * The Studio verifies receipts in the browser with its own copy of the server's checks (it cannot
 * import the server's modules). Run here in Node (WebCrypto is global in Node 20): its inclusion
 * check over every RFC 6962 vector, and its signed bytes beside the server's for the same inputs.
 */
const INCLUSION = fileURLToPath(new URL('../fixtures/vectors/rfc6962/inclusion', import.meta.url));

interface InclusionVector {
  leafIdx: number;
  treeSize: number;
  root: string;
  leafHash: string;
  proof: string[] | null;
  wantErr: boolean;
}

const vectors = readdirSync(INCLUSION, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => [f, JSON.parse(readFileSync(path.join(INCLUSION, f), 'utf8')) as InclusionVector]);

describe("the Studio's inclusion check, over the RFC 6962 vectors", () => {
  it('finds the vectors, failure cases among them', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(90);
    expect(vectors.filter(([, v]) => (v as InclusionVector).wantErr).length).toBeGreaterThan(60);
  });

  it.each(vectors)('%s', async (_name, vector) => {
    const v = vector as InclusionVector;
    const args = [
      fromBase64(v.leafHash),
      v.leafIdx,
      v.treeSize,
      (v.proof ?? []).map(fromBase64),
      fromBase64(v.root),
    ] as const;
    expect(await verifyInclusion(...args)).toBe(!v.wantErr);
    expect(serverVerifyInclusion(...args)).toBe(!v.wantErr);
  });
});

const bytes = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe("the Studio's signed bytes are the server's", () => {
  it('leaf hash', async () => {
    for (const leaf of ['', '{"a":1}', 'ünïcødé ✓ 🔒', 'x'.repeat(1000)]) {
      const data = Buffer.from(leaf, 'utf8');
      expect(bytes(await leafHash(data))).toBe(bytes(serverLeafHash(data)));
    }
  });

  it('DSSE pre-authentication encoding', () => {
    const cases: [string, string][] = [
      ['application/vnd.in-toto+json', '{"_type":"https://in-toto.io/Statement/v1"}'],
      ['', ''],
      ['tÿpe ✓', 'payload with ünïcødé and 🔒 and spaces'],
    ];
    for (const [type, payload] of cases) {
      const body = Buffer.from(payload, 'utf8');
      expect(bytes(pae(type, body))).toBe(bytes(serverPae(type, body)));
    }
  });

  it('request hash', async () => {
    const inputs: RequestHashInput[] = [
      {
        tenant: 'acme',
        project: 'web',
        environment: 'dev',
        agent: { id: 'triage-bot', version: '1.2.0' },
        tool: { id: 'demo/echo', version: '1.0.0' },
        input: { message: 'hi' },
      },
      {
        tenant: 'tënant ✓',
        project: 'p',
        environment: 'prod',
        agent: { id: 'a', version: '0.0.1' },
        tool: { id: 'demo/sh', version: '2.0.0' },
        input: { z: [1, 2.5, -0, 1e21, null, true], a: { é: '🔒', b: '' }, '10': 'x', '9': 'y' },
      },
      {
        tenant: 't',
        project: 'p',
        environment: 'e',
        agent: { id: 'a', version: 'v' },
        tool: { id: 't', version: 'v' },
        input: null,
      },
    ];
    for (const input of inputs) {
      const extra = { ...input, invocationId: 'inv-1', requestHash: 'ignored' };
      expect(await requestHash(extra)).toBe(serverRequestHash(input));
    }
  });

  it('checkpoint message', () => {
    let signed = '';
    const recorder: Signer = {
      sign: (data) => {
        signed = bytes(data);
        return { keyid: 'k', sig: Buffer.alloc(64) };
      },
    };
    for (const [tenant, treeSize] of [
      ['acme', 0],
      ['tënant ✓', 123456789],
    ] as const) {
      const cp = signCheckpoint(
        {
          tenant,
          treeSize,
          rootHash: Buffer.alloc(32, treeSize % 251),
          timestamp: '2026-12-01T17:00:00.000Z',
        },
        recorder,
      );
      expect(bytes(checkpointMessage(cp))).toBe(signed);
    }
  });
});
