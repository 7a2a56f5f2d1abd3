export { McpServerState, canTransitionMcpServer, transitionMcpServer } from './mcp-server.js';
export type { McpServerRecord, McpTransport } from './mcp-server.js';
export { serverIdentity, defaultCheckUrl } from './server-identity.js';
export { toolDigest, diffTool, upstreamTool, DIGEST_FIELDS } from './tool-digest.js';
export type { UpstreamTool, ToolFieldChange, DigestField } from './tool-digest.js';
export { BindingState } from './mcp-binding.js';
export type { McpBinding, Discovery, DiscoveredTool } from './mcp-binding.js';
export type { McpStore, McpStoreChange } from './mcp-store.js';
export { mcpDescriptor, mcpExecution } from './mcp-descriptor.js';
export type { BindingRequest, McpExecution } from './mcp-descriptor.js';
export { McpService } from './mcp-service.js';
export type { McpServerView } from './mcp-service.js';
export type { McpServiceOptions } from './mcp-service-options.js';
export type { ProtectedDir } from './writable-dirs.js';
export type { RegisterServer } from './server-lifecycle.js';
export type { BindResult, PublicationCheck, ReapproveResult } from './tool-bindings.js';
export type { CallReadiness } from './upstream-calls.js';
export type { UpstreamView } from './upstream-view.js';
export { UpstreamConnection } from './upstream/connection.js';
export type { UpstreamCallOutcome } from './upstream/call-outcome.js';
export type { DiscoveredLists } from './upstream/discovery.js';
export type { McpWatcher } from './mcp-watchers.js';
export type { CallProgress } from './upstream/connection.js';
export { LOGGING_LEVELS } from './upstream/connection-options.js';
export type {
  LoggingLevel,
  UpstreamNotice,
  ConnectionCredentials,
  LaunchedStdio,
  StdioLauncher,
} from './upstream/connection-options.js';
export { processAlive } from './upstream/process-exit.js';
export { ChildStdioTransport } from './upstream/child-stdio-transport.js';
export type { ChildStdioOptions } from './upstream/child-stdio-transport.js';
export { RecordedReads, ReadRefusal, ReadType } from './recorded-reads.js';
export type { AuditWriter, ReadRequest, RecordedReadsOptions } from './recorded-reads.js';
export { FORWARDED_METHODS } from './upstream/server-requests.js';
export type { ForwardedMethod, ServerRequestHandler } from './upstream/server-requests.js';
