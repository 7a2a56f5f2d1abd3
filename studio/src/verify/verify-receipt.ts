import { api, messageOf } from '../api.js';
import { equalBytes, fromBase64, toBase64, utf8 } from './bytes.js';
import { leafHash, verifyInclusion } from './merkle.js';
import { checkpointMessage, jcs, pae, requestHash } from './receipt-bytes.js';

/** One check of a receipt, with what it found. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** The verdict on a receipt: verified only when every check passed. */
export interface ReceiptVerdict {
  ok: boolean;
  checks: Check[];
}

interface Envelope {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
}
interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
}
interface Predicate {
  invocationId: string;
  tenant: string;
  project: string;
  environment: string;
  agent: { id: string; version: string };
  tool: { id: string; version: string };
  input: unknown;
  requestHash: string;
  audit?: { index: number; treeSize: number } | null;
}
interface Checkpoint {
  tenant: string;
  treeSize: number;
  rootHash: string;
  timestamp: string;
  keyid: string;
  signature: string;
}

/** Ed25519 verification with WebCrypto against a key of the published JWK set. */
async function ed25519(
  keys: Jwk[],
  keyid: string,
  signed: Uint8Array,
  sig: Uint8Array,
): Promise<string | null> {
  const jwk = keys.find((k) => k.kid === keyid);
  if (!jwk) return `no published key has kid ${keyid}`;
  const key = await crypto.subtle.importKey(
    'jwk',
    { kty: jwk.kty, crv: jwk.crv, x: jwk.x },
    { name: 'Ed25519' },
    false,
    ['verify'],
  );
  const good = await crypto.subtle.verify(
    'Ed25519',
    key,
    sig as BufferSource,
    signed as BufferSource,
  );
  return good ? null : `the Ed25519 signature by ${keyid} does not verify`;
}

/**
 * Verifies an invocation's receipt here, in the browser, trusting nothing the page was told:
 * the Ed25519 signature over DSSE's PAE against `/v1/receipt-keys`; the request hash recomputed
 * (RFC 8785 + SHA-256) from the predicate; the receipt's audit record hashed into its leaf; the
 * checkpoint's signature; and the record's inclusion proof against the checkpoint's root.
 */
export async function verifyReceipt(invocationId: string): Promise<ReceiptVerdict> {
  const checks: Check[] = [];
  const add = (name: string, problem: string | null, good: string): boolean => {
    checks.push({ name, ok: problem === null, detail: problem ?? good });
    return problem === null;
  };
  const done = (): ReceiptVerdict => ({ ok: checks.every((c) => c.ok), checks });
  try {
    const [env, jwks] = await Promise.all([
      api<Envelope>('GET', `/v1/invocations/${encodeURIComponent(invocationId)}/receipt`),
      api<{ keys: Jwk[] }>('GET', '/v1/receipt-keys'),
    ]);
    const payload = fromBase64(env.payload);
    const sig = env.signatures[0];
    const sigProblem = sig
      ? await ed25519(jwks.keys, sig.keyid, pae(env.payloadType, payload), fromBase64(sig.sig))
      : 'the envelope has no signature';
    if (!add('Signature', sigProblem, `Ed25519 over DSSE PAE, key ${sig?.keyid ?? ''}`))
      return done();

    const statement = JSON.parse(new TextDecoder().decode(payload)) as {
      subject: { name: string; digest: { sha256: string } }[];
      predicate: Predicate;
    };
    const p = statement.predicate;
    const recomputed = await requestHash(p);
    const subject = statement.subject[0];
    add(
      'Request hash',
      subject?.name !== `invocation/${invocationId}`
        ? `the subject is ${subject?.name ?? 'missing'}, not invocation/${invocationId}`
        : subject.digest.sha256 !== recomputed || p.requestHash !== recomputed
          ? `recomputed ${recomputed}, the receipt says ${subject.digest.sha256}`
          : null,
      `recomputed from the predicate (RFC 8785): ${recomputed}`,
    );

    if (!p.audit) {
      add('Audit log', 'the receipt names no audit record', '');
      return done();
    }
    const record = await api<{ record: { subject: string }; leaf: string; leafHash: string }>(
      'GET',
      `/v1/audit/records/${p.audit.index}`,
    );
    const leaf = await leafHash(utf8(record.leaf));
    add(
      'Audit record',
      record.record.subject !== `invocation/${invocationId}`
        ? `record ${p.audit.index} is about ${record.record.subject}`
        : !equalBytes(jcs(record.record), utf8(record.leaf))
          ? 'the record is not the canonical JSON of its leaf'
          : null,
      `record ${p.audit.index}, leaf hash ${toBase64(leaf)}`,
    );

    const cp = await api<Checkpoint>('GET', '/v1/audit/checkpoint');
    const cpProblem = await ed25519(
      jwks.keys,
      cp.keyid,
      checkpointMessage(cp),
      fromBase64(cp.signature),
    );
    if (!add('Checkpoint', cpProblem, `tree size ${cp.treeSize}, signed ${cp.timestamp}`))
      return done();

    const proof = await api<{ proof: string[] }>(
      'GET',
      `/v1/audit/proof?index=${p.audit.index}&size=${cp.treeSize}`,
    );
    const included = await verifyInclusion(
      leaf,
      p.audit.index,
      cp.treeSize,
      proof.proof.map(fromBase64),
      fromBase64(cp.rootHash),
    );
    add(
      'Inclusion proof',
      included ? null : `record ${p.audit.index} is not proved to be in the tree of ${cp.treeSize}`,
      `record ${p.audit.index} is in the signed tree of ${cp.treeSize} records`,
    );
  } catch (e) {
    add('Receipt', messageOf(e), '');
  }
  return done();
}
