import { loadConfig, openDemo } from '../src/app/index.js';
import type { Gateway } from '../src/app/index.js';
import type { Principal } from '../src/tenancy/index.js';

/** An in-process demo gateway and its seeded demo agent. */
export interface DemoGateway {
  gateway: Gateway;
  /** The demo agent, authenticated by its seeded token. */
  agent: Principal;
}

/**
 * Opens an in-process gateway with the demo tools on `dataDir` (request logging off) and seeds the
 * demo tenant. The caller closes `gateway`; it is closed here when seeding fails.
 */
export async function openDemoGateway(dataDir: string): Promise<DemoGateway> {
  const config = loadConfig({ dataDir, port: 0, demo: true, logRequests: false }, {});
  const { gateway, tokens } = await openDemo(config);
  try {
    const agent = gateway.directory.authenticate(tokens.agent);
    if (!agent) throw new Error('the demo agent token does not authenticate');
    return { gateway, agent };
  } catch (err) {
    await gateway.close();
    throw err;
  }
}
