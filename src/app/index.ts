export { Gateway } from './gateway.js';
export type { GatewayDeps } from './gateway.js';
export { loadConfig } from './config.js';
export type { ConfigFlags, GatewayConfig } from './config.js';
export { seedDemo } from './demo.js';
export type { DemoTokens } from './demo.js';
export { registerDemoHandlers, demoToolEvents, demoAgentEvent } from './demo-tools.js';
export { startGateway } from './start-gateway.js';
export { verifyDataDirectory } from './verify-data-dir.js';
