export { ApprovalStatus, transitionApproval, isExpired } from './approval.js';
export type { Approval, ApprovalDecision } from './approval.js';
export type { ApprovalStore } from './approval-store.js';
export { ApprovalService } from './approval-service.js';
export type { ApprovalServiceOptions } from './approval-service.js';
export { checkApproval } from './check-approval.js';
export type { ApprovalProblem, ApprovalUse } from './check-approval.js';
