export { buildServer } from './server.js';
export type { ServerOptions } from './server.js';
export type { GatewayServices } from './services.js';
export { GatewayMetrics } from './gateway-metrics.js';
export { HTTP_STATUS_OF, errorBody, invocationStatusCode } from './error-status.js';
