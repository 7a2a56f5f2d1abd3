import type { GatewayConfig } from './config.js';
import type { DemoTokens } from './demo.js';
import { Gateway } from './gateway.js';
import { openDemo } from './open-demo.js';

/**
 * Opens the gateway (with the demo's handlers, services and seed when `config.demo`), listens,
 * and returns it with its URL and, for the demo, the tokens.
 */
export async function startGateway(
  config: GatewayConfig,
): Promise<{ gateway: Gateway; url: string; tokens?: DemoTokens }> {
  const { gateway, tokens } = config.demo
    ? await openDemo(config)
    : { gateway: await Gateway.open(config), tokens: undefined };
  try {
    const url = await gateway.listen();
    return { gateway, url, ...(tokens ? { tokens } : {}) };
  } catch (err) {
    await gateway.close();
    throw err;
  }
}
