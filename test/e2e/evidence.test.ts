import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import canonicalizeImpl from 'canonicalize';
import { afterEach, describe, expect, it } from 'vitest';
import {
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyReceipt,
} from '../../src/audit/index.js';
import type {
  Checkpoint,
  ConsistencyAnswer,
  InclusionAnswer,
  JwkSet,
} from '../../src/audit/index.js';
import type { InvocationRecord, OutputInfo } from '../../src/invocation/index.js';
import { call, startDemoGateway } from '../helpers/gateway-fixture.js';
import type { DemoGateway } from '../helpers/gateway-fixture.js';

// canonicalize ships CommonJS typings with `export =`; at runtime the default import is the function.
const canonicalize = canonicalizeImpl as unknown as (value: unknown) => string;

interface Envelope {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/**
 * A receipt verifier that shares no code with Gatehouse: DSSE v1 PAE built by hand, the key
 * taken from the published JWK set, Ed25519 through node:crypto.
 */
function independentlyVerify(envelope: Envelope, jwks: { keys: Record<string, unknown>[] }) {
  const payload = Buffer.from(envelope.payload, 'base64');
  const type = Buffer.from(envelope.payloadType, 'utf8');
  const pae = Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `),
    type,
    Buffer.from(` ${payload.length} `),
    payload,
  ]);
  const valid = envelope.signatures.some((s) => {
    const jwk = jwks.keys.find((k) => k.kid === s.keyid);
    if (!jwk) return false;
    const key = createPublicKey({ key: jwk as never, format: 'jwk' });
    return verify(null, pae, key, Buffer.from(s.sig, 'base64'));
  });
  return { valid, statement: JSON.parse(payload.toString('utf8')) as Record<string, unknown> };
}

function b64(s: string): Buffer {
  return Buffer.from(s, 'base64');
}

let g: DemoGateway | undefined;
afterEach(async () => {
  await g?.close();
  g = undefined;
});

/** One audit record as `GET /v1/audit/records/:index` serves it. */
interface AuditRecordAnswer {
  index: number;
  record: Record<string, unknown>;
  leaf: string;
  leafHash: string;
}

async function echo(d: DemoGateway, key: string, message: string): Promise<InvocationRecord> {
  const res = await d.invoke(d.tokens.agent, key, call('demo/echo', { message }));
  expect(res.status).toBe(200);
  return res.body;
}

describe('receipts', () => {
  it('verify with verifyReceipt and with an independent DSSE/Ed25519 verifier', async () => {
    g = await startDemoGateway();
    const r = await echo(g, 'receipt-1', 'evidence');
    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    const envelope = (
      await g.inject('GET', `/v1/invocations/${r.id}/receipt`, { token: g.tokens.agent })
    ).body as Envelope;

    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    const ours = verifyReceipt(envelope, jwks);
    expect(ours).toMatchObject({ ok: true });

    const theirs = independentlyVerify(envelope, jwks as never);
    expect(theirs.valid).toBe(true);
    const st = theirs.statement as {
      _type: string;
      subject: { name: string; digest: { sha256: string } }[];
      predicate: { invocationId: string; status: string; input: unknown; requestHash: string };
    };
    expect(st._type).toBe('https://in-toto.io/Statement/v1');
    expect(st.subject).toEqual([{ name: `invocation/${r.id}`, digest: { sha256: r.requestHash } }]);
    expect(st.predicate).toMatchObject({
      invocationId: r.id,
      status: 'observed',
      input: { message: 'evidence' },
    });

    // One changed byte of payload breaks both verifiers.
    const payload = b64(envelope.payload);
    const at = payload.indexOf('evidence');
    payload[at] = 'E'.charCodeAt(0);
    const forged = { ...envelope, payload: payload.toString('base64') };
    expect(verifyReceipt(forged, jwks).ok).toBe(false);
    expect(independentlyVerify(forged, jwks as never).valid).toBe(false);
  });

  it("place the invocation's final audit record in the signed, provable log", async () => {
    g = await startDemoGateway();
    for (let i = 0; i < 3; i++) await echo(g, `before-${i}`, `m${i}`);
    const r = await echo(g, 'audited', 'in the log');
    const op = { token: g.tokens.operator };
    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    const envelope = (await g.inject('GET', `/v1/invocations/${r.id}/receipt`, op)).body;
    const verdict = verifyReceipt(envelope, jwks);
    if (!verdict.ok) throw new Error(verdict.reason);
    const { index, treeSize } = verdict.statement.predicate.audit;
    expect(treeSize).toBe(index + 1);

    const rec = await g.inject<AuditRecordAnswer>('GET', `/v1/audit/records/${index}`, op);
    expect(rec.status).toBe(200);
    expect(rec.body.record).toMatchObject({
      index,
      tenant: 'acme',
      type: 'invocation.observed',
      subject: `invocation/${r.id}`,
    });
    expect(rec.body.leaf).toBe(canonicalize(rec.body.record));
    const leafHash = createHash('sha256')
      .update(Buffer.from([0]))
      .update(rec.body.leaf, 'utf8')
      .digest('base64');
    expect(rec.body.leafHash).toBe(leafHash);

    await echo(g, 'after', 'grows the log');
    const cp = await g.inject<Checkpoint>('GET', '/v1/audit/checkpoint', op);
    expect(cp.status).toBe(200);
    expect(cp.body.treeSize).toBeGreaterThan(treeSize);
    expect(verifyCheckpoint(cp.body, jwks)).toBe(true);
    expect(verifyCheckpoint({ ...cp.body, treeSize: cp.body.treeSize - 1 }, jwks)).toBe(false);
    // And without Gatehouse code: Ed25519 over the JCS of the signed fields.
    const signed = canonicalize({
      rootHash: cp.body.rootHash,
      tenant: cp.body.tenant,
      timestamp: cp.body.timestamp,
      treeSize: cp.body.treeSize,
    });
    const jwk = jwks.keys.find((k) => k.kid === cp.body.keyid);
    expect(jwk).toBeDefined();
    expect(
      verify(
        null,
        Buffer.from(signed),
        createPublicKey({ key: jwk as never, format: 'jwk' }),
        b64(cp.body.signature),
      ),
    ).toBe(true);

    const proof = await g.inject<InclusionAnswer>(
      'GET',
      `/v1/audit/proof?index=${index}&size=${cp.body.treeSize}`,
      op,
    );
    expect(proof.status).toBe(200);
    expect(proof.body).toMatchObject({
      index,
      treeSize: cp.body.treeSize,
      leafHash,
      rootHash: cp.body.rootHash,
    });
    const path = proof.body.proof.map(b64);
    const root = b64(cp.body.rootHash);
    expect(verifyInclusion(b64(leafHash), index, cp.body.treeSize, path, root)).toBe(true);
    // The same proof does not place another record there.
    const other = await g.inject<AuditRecordAnswer>('GET', `/v1/audit/records/${index - 1}`, op);
    expect(verifyInclusion(b64(other.body.leafHash), index, cp.body.treeSize, path, root)).toBe(
      false,
    );
  });

  it('prove with a consistency proof that a later checkpoint extends an earlier one', async () => {
    g = await startDemoGateway();
    const op = { token: g.tokens.operator };
    await echo(g, 'c-1', 'one');
    const early = (await g.inject<Checkpoint>('GET', '/v1/audit/checkpoint', op)).body;
    for (let i = 0; i < 5; i++) await echo(g, `c-more-${i}`, `more ${i}`);
    const late = (await g.inject<Checkpoint>('GET', '/v1/audit/checkpoint', op)).body;
    expect(late.treeSize).toBeGreaterThan(early.treeSize);

    const res = await g.inject<ConsistencyAnswer>(
      'GET',
      `/v1/audit/consistency?from=${early.treeSize}&to=${late.treeSize}`,
      op,
    );
    expect(res.status).toBe(200);
    expect(res.body.fromRoot).toBe(early.rootHash);
    expect(res.body.toRoot).toBe(late.rootHash);
    const proof = res.body.proof.map(b64);
    expect(
      verifyConsistency(
        early.treeSize,
        late.treeSize,
        proof,
        b64(early.rootHash),
        b64(late.rootHash),
      ),
    ).toBe(true);
    // A root that was rewritten is not consistent with the proof.
    const rewritten = b64(early.rootHash);
    rewritten[0] = (rewritten[0] ?? 0) ^ 1;
    expect(
      verifyConsistency(early.treeSize, late.treeSize, proof, rewritten, b64(late.rootHash)),
    ).toBe(false);
  });
});

describe('large output', () => {
  it('is cut to the bound and kept whole as an artifact named by its digest', async () => {
    g = await startDemoGateway({ config: { maxOutputBytes: 1000 } });
    const message = 'x'.repeat(5000);
    const res = await g.invoke(g.tokens.agent, 'big', call('demo/echo', { message }));
    expect(res.status).toBe(200);
    const r = res.body;
    const info = r.outputInfo as OutputInfo;
    expect(r.status).toBe('observed');
    expect((r.output as { truncated: boolean }).truncated).toBe(true);
    expect(JSON.stringify(r.output).length).toBeLessThan(2000);
    expect(info.truncated).toBe(true);
    expect(info.artifact).toMatch(/^[0-9a-f]{64}$/);
    expect(info.artifact).toBe(info.sha256Full);

    const artifacts = join(g.dataDir, 'artifacts');
    const files = (readdirSync(artifacts, { recursive: true }) as string[]).filter((f) =>
      f.endsWith(info.artifact ?? 'none'),
    );
    expect(files).toHaveLength(1);
    const bytes = readFileSync(join(artifacts, files[0]!));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(info.sha256Full);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({ message });
    expect(info.bytes).toBe(bytes.length);

    const jwks = (await g.inject('GET', '/v1/receipt-keys')).body as JwkSet;
    const envelope = (
      await g.inject('GET', `/v1/invocations/${r.id}/receipt`, { token: g.tokens.agent })
    ).body;
    const verdict = verifyReceipt(envelope, jwks);
    expect(verdict.ok).toBe(true);
    if (verdict.ok)
      expect(verdict.statement.predicate.output).toMatchObject({
        sha256Full: info.sha256Full,
        truncated: true,
        artifact: info.artifact,
      });
  });

  it('is cut by bytes, never inside a character, and the marker counts bytes', async () => {
    g = await startDemoGateway({ config: { maxOutputBytes: 1000 } });
    const r = await echo(g, 'wide', '€'.repeat(2000));
    const out = r.output as { preview: string; marker: string };
    const kept = Buffer.byteLength(out.preview);
    // 744 = the bound less the room left for the marker; '{"message":"' is 12 bytes, '€' 3.
    expect(out.preview).toBe(`{"message":"${'€'.repeat(244)}`);
    expect(kept).toBe(744);
    expect(out.marker).toMatch(new RegExp(`^\\[output cut at ${kept} of 6014 bytes;`));
  });

  it('within the bound is returned whole and stores no artifact', async () => {
    g = await startDemoGateway({ config: { maxOutputBytes: 1000 } });
    const r = await echo(g, 'small', 'y'.repeat(500));
    expect(r.output).toEqual({ message: 'y'.repeat(500) });
    expect(r.outputInfo).toMatchObject({ truncated: false });
  });
});
