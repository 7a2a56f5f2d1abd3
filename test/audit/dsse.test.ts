import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jwkThumbprint, pae, signEnvelope, verifyEnvelope } from '../../src/audit/index.js';
import type { Jwk, JwkSet, Signer } from '../../src/audit/index.js';

function testSigner(): { signer: Signer; jwks: JwkSet } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = String(publicKey.export({ format: 'jwk' }).x);
  const kid = jwkThumbprint({ crv: 'Ed25519', kty: 'OKP', x });
  const jwk: Jwk = { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' };
  return {
    signer: { sign: (data) => ({ keyid: kid, sig: sign(null, data, privateKey) }) },
    jwks: { keys: [jwk] },
  };
}

describe('pae', () => {
  it('matches the DSSE specification example', () => {
    expect(pae('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).toBe(
      'DSSEv1 29 http://example.com/HelloWorld 11 hello world',
    );
  });

  it('counts bytes, not characters', () => {
    expect(pae('t/é', Buffer.from('€', 'utf8'))).toEqual(
      Buffer.concat([
        Buffer.from('DSSEv1 4 t/'),
        Buffer.from([0xc3, 0xa9]),
        Buffer.from(' 3 '),
        Buffer.from([0xe2, 0x82, 0xac]),
      ]),
    );
    expect(pae('', Buffer.alloc(0)).toString()).toBe('DSSEv1 0  0 ');
  });
});

describe('DSSE envelopes', () => {
  const payload = Buffer.from('{"hello":"world"}');

  it('round-trips a signed envelope', () => {
    const { signer, jwks } = testSigner();
    const env = signEnvelope('application/json', payload, signer);
    expect(env.payloadType).toBe('application/json');
    expect(Buffer.from(env.payload, 'base64')).toEqual(payload);
    expect(env.signatures).toHaveLength(1);
    const result = verifyEnvelope(JSON.parse(JSON.stringify(env)), jwks);
    expect(result).toEqual({ ok: true, payload });
  });

  it('rejects a changed payload or payload type as a bad signature', () => {
    const { signer, jwks } = testSigner();
    const env = signEnvelope('application/json', payload, signer);
    const changedPayload = { ...env, payload: Buffer.from('{"hello":"there"}').toString('base64') };
    const changedType = { ...env, payloadType: 'text/plain' };
    for (const e of [changedPayload, changedType]) {
      const r = verifyEnvelope(e, jwks);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.reason).toMatch(/^bad signature by keyid/);
    }
  });

  it('names an unknown keyid', () => {
    const { signer } = testSigner();
    const other = testSigner();
    const env = signEnvelope('application/json', payload, signer);
    const r = verifyEnvelope(env, other.jwks);
    expect(!r.ok && r.reason).toContain(`unknown keyid "${env.signatures[0]?.keyid}"`);
  });

  it('accepts when any one signature verifies', () => {
    const a = testSigner();
    const b = testSigner();
    const env = signEnvelope('application/json', payload, a.signer);
    const extra = signEnvelope('application/json', payload, b.signer).signatures;
    const both = { ...env, signatures: [...extra, ...env.signatures] };
    expect(verifyEnvelope(both, a.jwks).ok).toBe(true);
  });

  it('names the malformed field', () => {
    const { signer, jwks } = testSigner();
    const env = signEnvelope('application/json', payload, signer);
    const cases: [unknown, string][] = [
      [null, 'envelope'],
      [{ ...env, payloadType: 3 }, 'payloadType'],
      [{ ...env, payload: 'not base64!' }, 'payload'],
      [{ ...env, signatures: [] }, 'signatures'],
      [{ ...env, signatures: [{ sig: env.signatures[0]?.sig }] }, 'signatures[0].keyid'],
      [{ ...env, signatures: [{ keyid: 'k', sig: '***' }] }, 'signatures[0].sig'],
    ];
    for (const [e, field] of cases) {
      const r = verifyEnvelope(e, jwks);
      expect(!r.ok && r.reason).toMatch(
        new RegExp(`^malformed envelope field ${field.replace(/[[\]]/g, '\\$&')}:`),
      );
    }
  });
});
