import { join } from 'node:path';
import type { GatewayConfig } from './config.js';
import { DemoServices } from './demo-services.js';
import { registerDemoHandlers } from './demo-tools.js';
import { seedDemo } from './demo.js';
import type { DemoTokens } from './demo.js';
import { Gateway } from './gateway.js';
import type { GatewayDeps } from './gateway.js';

/**
 * Opens a gateway with the demo, as `gatehouse serve --demo` does: the demo's native handlers
 * (after those of `deps`), its services beside the gateway (the ticket service, the demo
 * repository), and its seed. The gateway is closed again when seeding fails.
 */
export async function openDemo(
  config: GatewayConfig,
  deps: GatewayDeps = {},
): Promise<{ gateway: Gateway; tokens: DemoTokens }> {
  const services = new DemoServices();
  const gateway = await Gateway.open(config, {
    ...deps,
    nativeHandlers: (native) => {
      deps.nativeHandlers?.(native);
      registerDemoHandlers(native, join(config.dataDir, 'demo-deployments.jsonl'));
    },
    companions: async (c) => [
      ...((await deps.companions?.(c)) ?? []),
      ...(await services.start(c)),
    ],
  });
  try {
    return { gateway, tokens: await seedDemo(gateway, services.tickets) };
  } catch (err) {
    await gateway.close();
    throw err;
  }
}
