/** The shapes the Studio reads from the REST API (the parts of them it shows). */

/** One reviewer's decision on an approval. */
export interface ApprovalDecision {
  principal: string;
  decision: 'approve' | 'reject';
  reason: string;
  at: string;
}

/** An approval request, bound to one request hash and tool version. */
export interface Approval {
  id: string;
  project: string;
  environment: string;
  environmentClass: string;
  invocationId: string;
  requestHash: string;
  tool: { id: string; version: string };
  descriptorDigest: string;
  effectiveClass: string;
  requestedBy: string;
  reason: string;
  input: unknown;
  requestedAt: string;
  expiresAt: string;
  quorum: number;
  status: 'pending' | 'approved' | 'rejected' | 'expired' | 'consumed' | 'invalidated';
  decisions: ApprovalDecision[];
  decidedAt: string | null;
  consumedAt: string | null;
  statusReason: string | null;
}

/** One stage decision of an invocation's trace. */
export interface TraceEntry {
  stage: string;
  decision: string;
  reason: string;
  at: string;
  details?: Record<string, unknown>;
}

/** An invocation record (DESIGN §9). */
export interface Invocation {
  id: string;
  status: string;
  tenant: string;
  project: string;
  environment: string;
  principal: string;
  agent: { id: string; version: string };
  tool: { id: string; version: string; descriptorDigest: string | null };
  input: unknown;
  requestHash: string;
  idempotencyKey: string;
  attempt: number;
  effectiveClass: string | null;
  approvalId: string | null;
  approval: {
    id: string;
    approvers: { principal: string; at: string }[];
    decidedAt: string;
  } | null;
  resolution: { effect: 'confirmed' | 'denied'; evidence: unknown; by: string; at: string } | null;
  trace: TraceEntry[];
  lease: Record<string, unknown> | null;
  egress: {
    at: string;
    method: string;
    host: string;
    port: number;
    allowed: boolean;
    reason: string;
  }[];
  redactions: { kind: string; encoding?: string; count: number }[];
  output?: unknown;
  outputInfo?: {
    sha256Full: string;
    sha256Sanitized: string;
    bytes: number;
    truncated: boolean;
    artifact?: string;
  };
  error?: { code: string; message: string; stage?: string };
  warnings: string[];
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  audit: { index: number; treeSize: number } | null;
}
