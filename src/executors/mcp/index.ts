export { McpExecutor } from './mcp-executor.js';
export type { McpExecutorOptions } from './mcp-executor.js';
