export { InvocationStatus, transitionInvocation, hasOutcome } from './invocation-status.js';
export { StageName } from './stage.js';
export type { StageDecision, StageResult, TraceEntry } from './stage.js';
export type { InvocationRecord, OutputInfo, Provenance } from './invocation-record.js';
export type { InvocationStore, InvocationStep, InvocationQuery } from './invocation-store.js';
export type {
  Executor,
  ExecutionRequest,
  ExecutionResult,
  ExecutionReport,
  LeaseNeed,
} from './executor.js';
export { judgeExecution } from './execution-verdict.js';
export { abortCode } from './executor.js';
export { Pipeline } from './pipeline.js';
export type { PipelineOptions, PipelineMetrics } from './pipeline.js';
export { InvocationService } from './invocation-service.js';
export {
  isKeyTaken,
  isSettledMeanwhile,
  keyTaken,
  lostToAnotherWriter,
  settledMeanwhile,
} from './key-taken.js';
export type { InvokeRequest, InvocationServiceOptions } from './invocation-service.js';
export { recoverInterrupted } from './recover-interrupted.js';
export type { RecoveryScope } from './recover-interrupted.js';
export { receiptPredicate } from './receipt-predicate.js';
export { UncertainEffects } from './uncertain-effects.js';
export type { ApprovalSettings } from './stages/approval-stage.js';
export { SandboxLeases } from './sandbox-leases.js';
export type { SandboxDefaults, SandboxNeeds, HeldLease, LeaseAsk } from './sandbox-leases.js';
export { OutputCapture, cutNote } from './output-capture.js';
export type { CapturedStream, CutNote, StreamRedaction } from './output-capture.js';
export type { ExecutionLease } from './executor.js';
export { PendingOutcomes } from './pending-outcomes.js';
export type { PendingOutcomesOptions } from './pending-outcomes.js';
export { CallerRefusal, InvocationTrace, noopTracer } from './invocation-telemetry.js';
export type {
  CallerChannel,
  CallerInteraction,
  InvocationLog,
  InvocationTelemetry,
} from './invocation-telemetry.js';
