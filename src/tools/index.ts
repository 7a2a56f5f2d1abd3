export { ToolKind, toolRef } from './descriptor.js';
export type { ToolDescriptor, ClassRule } from './descriptor.js';
export {
  DescriptorState,
  canTransitionDescriptor,
  transitionDescriptor,
} from './descriptor-state.js';
export { agentReleaseRef } from './agent-release.js';
export { knownVersionsText } from './known-versions.js';
export type { KnownVersion } from './known-versions.js';
export type { AgentRelease, McpToolNaming } from './agent-release.js';
export { JsonSchemaValidator } from './json-schema.js';
export type { SchemaViolation } from './json-schema.js';
export { ReleaseEventParser } from './release-events.js';
export { TOOL_ID_PATTERN, TOOL_VERSION_PATTERN } from './event-schemas.js';
export type { ReleaseEvent, InFlightPolicy } from './release-events.js';
export { validateDescriptor, compileDescriptorShape, compileInput } from './validate-descriptor.js';
export type { ExecutionCheck, InputCheck, ValidatedDescriptor } from './validate-descriptor.js';
export { ToolRegistry } from './tool-registry.js';
export type {
  RegisteredTool,
  EventOutcome,
  ToolRegistryOptions,
  RevocationListener,
} from './tool-registry.js';
export type {
  ToolStore,
  ToolStoreChange,
  StoredDescriptor,
  StoredAgentRelease,
  AppliedEvent,
} from './tool-store.js';
