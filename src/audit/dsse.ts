import { verifyWithJwks, findJwk } from './jwks.js';
import type { JwkSet } from './jwks.js';
import type { Signer } from './signer.js';

/** A DSSE v1 envelope (https://github.com/secure-systems-lab/dsse). */
export interface DsseEnvelope {
  payloadType: string;
  /** base64 of the payload bytes. */
  payload: string;
  signatures: { keyid: string; /** base64 */ sig: string }[];
}

/** The result of {@link verifyEnvelope}. */
export type DsseVerification = { ok: true; payload: Buffer } | { ok: false; reason: string };

/**
 * DSSE v1 pre-authentication encoding, the bytes that are signed:
 * `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as ASCII decimal byte counts.
 */
export function pae(payloadType: string, payload: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${type.length} `, 'utf8'),
    type,
    Buffer.from(` ${payload.length} `, 'utf8'),
    payload,
  ]);
}

/** Signs `payload` as a DSSE envelope with one signature by `signer`. Safe to repeat. */
export function signEnvelope(payloadType: string, payload: Buffer, signer: Signer): DsseEnvelope {
  const { keyid, sig } = signer.sign(pae(payloadType, payload));
  return {
    payloadType,
    payload: payload.toString('base64'),
    signatures: [{ keyid, sig: sig.toString('base64') }],
  };
}

// Standard or URL-safe alphabet, padding optional, as DSSE allows.
const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

/**
 * Verifies a DSSE envelope (parsed JSON of any shape) against `jwks`: accepted when at least one
 * signature is by a key of the set and verifies over the PAE of the envelope's type and payload.
 * Never throws; a refusal says why (malformed field, unknown keyid, bad signature).
 */
export function verifyEnvelope(env: unknown, jwks: JwkSet): DsseVerification {
  if (typeof env !== 'object' || env === null || Array.isArray(env)) {
    return malformed('envelope', 'not a JSON object');
  }
  const e = env as Record<string, unknown>;
  if (typeof e.payloadType !== 'string' || e.payloadType === '') {
    return malformed('payloadType', 'not a non-empty string');
  }
  if (typeof e.payload !== 'string' || !BASE64.test(e.payload)) {
    return malformed('payload', 'not a base64 string');
  }
  if (!Array.isArray(e.signatures) || e.signatures.length === 0) {
    return malformed('signatures', 'not a non-empty list');
  }
  const signatures: { keyid: string; sig: Buffer }[] = [];
  for (const [i, s] of (e.signatures as unknown[]).entries()) {
    const entry = (typeof s === 'object' && s !== null ? s : {}) as Record<string, unknown>;
    if (typeof entry.keyid !== 'string') return malformed(`signatures[${i}].keyid`, 'not a string');
    if (typeof entry.sig !== 'string' || entry.sig === '' || !BASE64.test(entry.sig)) {
      return malformed(`signatures[${i}].sig`, 'not a non-empty base64 string');
    }
    signatures.push({ keyid: entry.keyid, sig: Buffer.from(entry.sig, 'base64') });
  }
  const payload = Buffer.from(e.payload, 'base64');
  const signed = pae(e.payloadType, payload);
  for (const s of signatures) {
    if (verifyWithJwks(jwks, s.keyid, signed, s.sig)) return { ok: true, payload };
  }
  const known = signatures.filter((s) => findJwk(jwks, s.keyid) !== undefined);
  if (known.length === 0) {
    const ids = signatures.map((s) => JSON.stringify(s.keyid)).join(', ');
    return {
      ok: false,
      reason: `unknown keyid ${ids}: no such key in the receipt key set (GET /v1/receipt-keys)`,
    };
  }
  const ids = known.map((s) => JSON.stringify(s.keyid)).join(', ');
  return {
    ok: false,
    reason: `bad signature by keyid ${ids}: the envelope was altered or signed over other bytes`,
  };
}

function malformed(field: string, problem: string): DsseVerification {
  return { ok: false, reason: `malformed envelope field ${field}: ${problem}` };
}
