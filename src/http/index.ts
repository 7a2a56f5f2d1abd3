export { buildServer } from './server.js';
export type { ServerOptions } from './server.js';
export type { GatewayServices } from './services.js';
export { GatewayMetrics } from './gateway-metrics.js';
export { HTTP_STATUS_OF, errorBody, invocationStatusCode } from './error-status.js';
export type { McpEndpointOptions } from './mcp-endpoint/endpoint.js';
export { JSONRPC_CODE_OF } from './mcp-endpoint/errors.js';
