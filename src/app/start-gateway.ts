import { join } from 'node:path';
import type { GatewayConfig } from './config.js';
import { registerDemoHandlers } from './demo-tools.js';
import { ensureDemoRepository } from './demo-repository.js';
import { seedDemo } from './demo.js';
import type { DemoTokens } from './demo.js';
import { Gateway } from './gateway.js';

/**
 * Opens the gateway (with the demo's handlers and seed when `config.demo`), listens, and
 * returns it with its URL and, for the demo, the tokens.
 */
export async function startGateway(
  config: GatewayConfig,
): Promise<{ gateway: Gateway; url: string; tokens?: DemoTokens }> {
  const deployLog = join(config.dataDir, 'demo-deployments.jsonl');
  if (config.demo) {
    const repo = await ensureDemoRepository(join(config.sandbox.root, 'repos', 'demo'));
    config.sandbox.repositories = { demo: repo, ...config.sandbox.repositories };
  }
  const gateway = await Gateway.open(
    config,
    config.demo ? { nativeHandlers: (native) => registerDemoHandlers(native, deployLog) } : {},
  );
  try {
    const tokens = config.demo ? await seedDemo(gateway) : undefined;
    const url = await gateway.listen();
    return { gateway, url, ...(tokens ? { tokens } : {}) };
  } catch (err) {
    await gateway.close();
    throw err;
  }
}
