export { McpExecutor } from './mcp-executor.js';
export type { McpExecutorOptions } from './mcp-executor.js';
export { DEFAULT_FORWARDING } from './forwarded-requests.js';
export type { ForwardingBounds } from './forwarded-requests.js';
