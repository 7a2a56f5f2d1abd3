export { NativeExecutor, BeforeEffectError } from './native/index.js';
export type { NativeHandler, NativeContext } from './native/index.js';
export { ShellExecutor, fillTemplate } from './shell/index.js';
export type { ShellExecution } from './shell/index.js';
export { McpExecutor } from './mcp/index.js';
export type { McpExecutorOptions } from './mcp/index.js';
export { HttpExecutor, upstreamIdempotencyKey, DEFAULT_FAILURE_STATUSES } from './http/index.js';
export type { HttpExecutorOptions, HttpExecution, HttpOutput } from './http/index.js';
