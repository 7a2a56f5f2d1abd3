import { IllegalStateError, canonicalBytes, requestHash } from '../core/index.js';
import { signEnvelope, verifyEnvelope } from './dsse.js';
import type { DsseEnvelope } from './dsse.js';
import type { JwkSet } from './jwks.js';
import type { Signer } from './signer.js';

/** The DSSE payload type of a receipt. */
export const RECEIPT_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
/** The in-toto Statement type a receipt's payload carries. */
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
/** The predicate type of a Gatehouse receipt. */
export const RECEIPT_PREDICATE_TYPE = 'https://gatehouse.dev/receipt/v1';

/** What a receipt records about one invocation (DESIGN §8). */
export interface ReceiptPredicate {
  invocationId: string;
  tenant: string;
  project: string;
  environment: string;
  agent: { id: string; version: string };
  /** `descriptorDigest` is null when the tool has no stored descriptor. */
  tool: { id: string; version: string; descriptorDigest: string | null };
  /** The input as given, so anyone can recompute the request hash. */
  input: unknown;
  /** Lowercase hex request hash; also the subject digest. */
  requestHash: string;
  idempotencyKey: string;
  /** Null when the invocation ended before it was classified (an early denial). */
  effectiveClass: string | null;
  /** The invocation's terminal status. */
  status: string;
  stages: { stage: string; decision: string; reason: string; at: string; details?: unknown }[];
  approval: null | {
    id: string;
    approvers: { principal: string; at: string }[];
    decidedAt: string;
  };
  /** The lease's limits and egress list, or null when none was taken. */
  lease: null | Record<string, unknown>;
  /** Each connection the sandbox tried through the egress proxy, allowed or refused. */
  egress?: {
    at: string;
    method: string;
    host: string;
    port: number;
    allowed: boolean;
    reason: string;
  }[];
  /** What the sanitizer removed: kinds and counts, never values. */
  redactions?: { kind: string; encoding?: string; count: number }[];
  outcome: { status: string; error?: { code: string; message: string } };
  /** Lowercase hex SHA-256 of the full and the sanitized output. */
  output: null | {
    sha256Full: string;
    sha256Sanitized: string;
    truncated: boolean;
    artifact?: string;
  };
  timestamps: { requestedAt: string; completedAt: string };
  /** Where the final audit record stands in the tenant's log and the size of the tree that first held it. */
  audit: { index: number; treeSize: number };
}

/** An in-toto Statement v1 whose predicate is a {@link ReceiptPredicate}. */
export interface ReceiptStatement {
  _type: typeof STATEMENT_TYPE;
  subject: [{ name: string; digest: { sha256: string } }];
  predicateType: typeof RECEIPT_PREDICATE_TYPE;
  predicate: ReceiptPredicate;
}

/** The result of {@link verifyReceipt}. */
export type ReceiptVerification =
  { ok: true; statement: ReceiptStatement } | { ok: false; reason: string };

/**
 * The in-toto Statement of a receipt; its one subject is `invocation/<id>` with the request hash.
 * @throws IllegalStateError when `predicate.requestHash` is not the hash of the predicate's own
 *   fields (a receipt nobody could verify is a bug, not a result).
 */
export function buildReceiptStatement(predicate: ReceiptPredicate): ReceiptStatement {
  const recomputed = requestHash(predicate);
  if (recomputed !== predicate.requestHash) {
    throw new IllegalStateError(
      `receipt for invocation ${predicate.invocationId}: requestHash ${predicate.requestHash} is not the hash ${recomputed} of its tenant, project, environment, agent, tool and input`,
    );
  }
  return {
    _type: STATEMENT_TYPE,
    subject: [
      { name: `invocation/${predicate.invocationId}`, digest: { sha256: predicate.requestHash } },
    ],
    predicateType: RECEIPT_PREDICATE_TYPE,
    predicate,
  };
}

/**
 * A signed receipt: a DSSE envelope whose payload is the JCS bytes of the statement.
 * @throws IllegalStateError as {@link buildReceiptStatement}.
 */
export function signReceipt(predicate: ReceiptPredicate, keyring: Signer): DsseEnvelope {
  const statement = buildReceiptStatement(predicate);
  return signEnvelope(RECEIPT_PAYLOAD_TYPE, canonicalBytes(statement), keyring);
}

/**
 * Verifies a receipt (parsed JSON of any shape): the envelope signature against `jwks`, the
 * payload and statement types, the single `invocation/<id>` subject, and the request hash,
 * recomputed from the predicate and compared with the subject digest and `predicate.requestHash`.
 * Fields the request hash does not cover are returned as signed, not checked. Never throws.
 */
export function verifyReceipt(envelope: unknown, jwks: JwkSet): ReceiptVerification {
  const env = verifyEnvelope(envelope, jwks);
  if (!env.ok) return env;
  const payloadType = (envelope as { payloadType: string }).payloadType;
  if (payloadType !== RECEIPT_PAYLOAD_TYPE) {
    return fail(`payloadType is ${payloadType}, expected ${RECEIPT_PAYLOAD_TYPE}`);
  }
  let statement: unknown;
  try {
    statement = JSON.parse(env.payload.toString('utf8'));
  } catch {
    return fail('payload is not JSON');
  }
  const s = (isObject(statement) ? statement : {}) as Record<string, unknown>;
  if (s._type !== STATEMENT_TYPE) return fail(`statement _type is not ${STATEMENT_TYPE}`);
  if (s.predicateType !== RECEIPT_PREDICATE_TYPE) {
    return fail(`predicateType is not ${RECEIPT_PREDICATE_TYPE}`);
  }
  if (!Array.isArray(s.subject) || s.subject.length !== 1) {
    return fail('statement must have exactly one subject');
  }
  const subject = (isObject(s.subject[0]) ? s.subject[0] : {}) as Record<string, unknown>;
  const digest = (isObject(subject.digest) ? subject.digest : {}) as Record<string, unknown>;
  if (typeof digest.sha256 !== 'string') return fail('subject has no sha256 digest');
  const p = s.predicate;
  if (!isHashable(p)) {
    return fail(
      'predicate lacks the request hash fields (tenant, project, environment, agent, tool, input)',
    );
  }
  if (subject.name !== `invocation/${String(p.invocationId)}`) {
    return fail(`subject name ${String(subject.name)} is not invocation/${String(p.invocationId)}`);
  }
  const recomputed = requestHash(p);
  if (digest.sha256 !== recomputed) {
    return fail(
      `subject digest ${digest.sha256} does not match the request hash ${recomputed} recomputed from the predicate`,
    );
  }
  if (p.requestHash !== recomputed) {
    return fail(
      `predicate.requestHash ${String(p.requestHash)} does not match the request hash ${recomputed} recomputed from the predicate`,
    );
  }
  return { ok: true, statement: statement as ReceiptStatement };
}

function fail(reason: string): ReceiptVerification {
  return { ok: false, reason };
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isHashable(p: unknown): p is ReceiptPredicate {
  if (!isObject(p) || !('input' in p)) return false;
  const r = p as Record<string, unknown>;
  const pair = (v: unknown): boolean =>
    isObject(v) &&
    typeof (v as Record<string, unknown>).id === 'string' &&
    typeof (v as Record<string, unknown>).version === 'string';
  return (
    typeof r.tenant === 'string' &&
    typeof r.project === 'string' &&
    typeof r.environment === 'string' &&
    pair(r.agent) &&
    pair(r.tool)
  );
}
