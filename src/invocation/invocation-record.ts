import type { AuditPosition, SideEffectClass } from '../core/index.js';
import type { Removal } from '../secrets/index.js';
import type { InvocationStatus } from './invocation-status.js';
import type { TraceEntry } from './stage.js';
import type { EgressDecision } from '../egress/index.js';

/** What became of the output: digests of the full and the sanitized forms. */
export interface OutputInfo {
  /**
   * SHA-256 (hex) of the canonical JSON of the full output as the tool produced it, before
   * redaction. A captured stream (a shell tool's stdout, stderr) too long to hold whole stands in
   * it as `{ sha256, bytes }` of its raw bytes.
   */
  sha256Full: string;
  /** SHA-256 (hex) of the canonical JSON of the output as returned. */
  sha256Sanitized: string;
  /** Size in bytes of the full output's canonical JSON. */
  bytes: number;
  truncated: boolean;
  /** Digest of the artifact holding the whole sanitized output, when it was cut. */
  artifact?: string;
}

/** Where the output came from; tool output is never trusted. */
export interface Provenance {
  tool: string;
  version: string;
  invocation: string;
  untrusted: true;
}

/** One invocation as stored and as returned by the API (DESIGN §9). */
export interface InvocationRecord {
  id: string;
  status: InvocationStatus;
  tenant: string;
  project: string;
  environment: string;
  /** The principal that asked. */
  principal: string;
  agent: { id: string; version: string };
  tool: { id: string; version: string; descriptorDigest: string | null };
  input: unknown;
  requestHash: string;
  idempotencyKey: string;
  /** 1 for the first attempt; a retry after an operator denied an Uncertain effect adds one. */
  attempt: number;
  /** The attempt this one retries, if any. */
  previousAttempt: string | null;
  effectiveClass: SideEffectClass | null;
  runId: string | null;
  attemptId: string | null;
  approvalId: string | null;
  /** Who approved the call and when, once it resumed with an approval. */
  approval: {
    id: string;
    approvers: { principal: string; at: string }[];
    decidedAt: string;
  } | null;
  /** An operator's resolution of an Uncertain effect. */
  resolution: { effect: 'confirmed' | 'denied'; evidence: unknown; by: string; at: string } | null;
  trace: TraceEntry[];
  /** The lease the call ran under (limits, egress allow-list, credential refs), if any. */
  lease: Record<string, unknown> | null;
  /** Each connection the call's sandbox tried through the egress proxy, allowed or refused. */
  egress: EgressDecision[];
  /** What the sanitizer removed (kinds and counts, never values). */
  redactions: Removal[];
  output?: unknown;
  outputInfo?: OutputInfo;
  provenance?: Provenance;
  error?: { code: string; message: string; stage?: string; details?: Record<string, unknown> };
  /** Deprecation and similar notices a caller should see. */
  warnings: string[];
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** Where the invocation's latest audit record stands in the tenant's log. */
  audit: AuditPosition | null;
  /**
   * The gateway node that stored its latest step (DESIGN §12): the one running it while it is
   * `running`. Absent on records stored before nodes were recorded.
   */
  node?: string;
}
