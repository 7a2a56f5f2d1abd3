import type { AuditPosition } from '../core/index.js';
import type { ReceiptPredicate } from '../audit/index.js';
import type { InvocationRecord } from './invocation-record.js';

/**
 * The receipt predicate of an invocation whose outcome is decided, its final audit record at
 * `record.audit`.
 */
export function receiptPredicate(
  record: InvocationRecord & { audit: AuditPosition },
): ReceiptPredicate {
  return {
    invocationId: record.id,
    tenant: record.tenant,
    project: record.project,
    environment: record.environment,
    agent: record.agent,
    tool: {
      id: record.tool.id,
      version: record.tool.version,
      descriptorDigest: record.tool.descriptorDigest,
    },
    input: record.input,
    requestHash: record.requestHash,
    idempotencyKey: record.idempotencyKey,
    effectiveClass: record.effectiveClass,
    status: record.status,
    stages: record.trace,
    approval: record.approval,
    lease: record.lease,
    egress: record.egress,
    redactions: record.redactions,
    outcome: {
      status: record.status,
      ...(record.error
        ? { error: { code: record.error.code, message: record.error.message } }
        : {}),
    },
    output: record.outputInfo
      ? {
          sha256Full: record.outputInfo.sha256Full,
          sha256Sanitized: record.outputInfo.sha256Sanitized,
          truncated: record.outputInfo.truncated,
          ...(record.outputInfo.artifact ? { artifact: record.outputInfo.artifact } : {}),
        }
      : null,
    timestamps: {
      requestedAt: record.createdAt,
      completedAt: record.completedAt ?? record.updatedAt,
    },
    audit: { index: record.audit.index, treeSize: record.audit.treeSize },
  };
}
