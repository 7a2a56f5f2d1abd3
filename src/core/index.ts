export { ErrorCode, GatehouseError, IllegalStateError, isGatehouseError } from './errors.js';
export type { GatehouseErrorOptions } from './errors.js';
export { canonicalJson, canonicalBytes, canonicalDigest, sha256Hex } from './canonical-json.js';
export { requestHash } from './request-hash.js';
export type { RequestHashInput } from './request-hash.js';
export { systemClock, ManualClock, isoTime } from './clock.js';
export type { Clock } from './clock.js';
export { uuidv7Ids, SequentialIds, monotonicIds } from './ids.js';
export type { IdGenerator } from './ids.js';
export { EventType } from './events.js';
export type {
  OutboxEvent,
  AuditRecordDraft,
  AuditRecord,
  AuditPosition,
  LedgerEntries,
  StoredEvent,
  OutboxFeed,
} from './events.js';
export {
  SideEffectClass,
  SIDE_EFFECT_CLASSES,
  isSideEffectClass,
  compareClass,
  maxClass,
} from './side-effect-class.js';
export { EnvironmentClass, isEnvironmentClass } from './tenancy.js';
export type { Environment } from './tenancy.js';
export { KeyedSerial } from './keyed-serial.js';
export { parseJsonPointer, resolveJsonPointer, jsonEquals } from './json-pointer.js';
export { utf8Prefix } from './utf8.js';
export { cutText } from './cut-text.js';
export { Lifecycle, ResourceLifecycle, transition } from './lifecycle.js';
export type { ResourceState, Transitions } from './lifecycle.js';
export { DEFAULT_MAX_JSON_DEPTH, parseJsonText, jsonValueProblem } from './json-text.js';
export type { JsonProblem, JsonRule } from './json-text.js';
export {
  DenialCode,
  DENIALS,
  FailureCode,
  RETRYABLE_FAILURES,
  isDenialCode,
  isRetryableFailure,
  AbortReason,
} from './outcome-codes.js';
export type { DenialMeaning } from './outcome-codes.js';
export { exactOrigin, headersForOrigin } from './origin.js';
export type { OriginBoundHeader } from './origin.js';
