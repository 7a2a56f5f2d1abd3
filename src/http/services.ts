import type { OutboxFeed } from '../core/index.js';
import type { AuditLog, JwkSet } from '../audit/index.js';
import type { ApprovalService } from '../approvals/index.js';
import type { InvocationService, UncertainEffects } from '../invocation/index.js';
import type { TenantPolicy } from '../policy/index.js';
import type { Directory } from '../tenancy/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { GatewayMetrics } from './gateway-metrics.js';

/** The parts the REST API translates to. */
export interface GatewayServices {
  registry: ToolRegistry;
  directory: Directory;
  invocations: InvocationService;
  approvals: ApprovalService;
  uncertain: UncertainEffects;
  policy: TenantPolicy;
  auditLog: AuditLog;
  /** The outbox, for the event stream. */
  events: OutboxFeed;
  /** The published receipt keys. */
  jwks: () => JwkSet;
  metrics: GatewayMetrics;
  /** False while starting or stopping. */
  ready: () => boolean;
}
