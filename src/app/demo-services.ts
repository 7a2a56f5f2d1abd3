import { join } from 'node:path';
import type { GatewayConfig } from './config.js';
import { ensureDemoRepository } from './demo-repository.js';
import { DemoTicketService } from './demo-ticket-service.js';
import type { Companion } from './gateway.js';

/**
 * What the demo runs beside the gateway: the git repository `demo/git-log` reads and the ticket
 * service on loopback, whose address joins the egress allow-list. Pass {@link start} as the
 * gateway's `companions`; the seed reads {@link tickets} afterwards.
 */
export class DemoServices {
  private service: DemoTicketService | undefined;

  /** The ticket service, once started. */
  get tickets(): DemoTicketService {
    if (!this.service) throw new Error('the demo services have not been started');
    return this.service;
  }

  /** Makes the repository, starts the ticket service and allows egress to it. */
  async start(config: GatewayConfig): Promise<Companion[]> {
    const repo = await ensureDemoRepository(join(config.sandbox.root, 'repos', 'demo'));
    config.sandbox.repositories = { demo: repo, ...config.sandbox.repositories };
    this.service = await DemoTicketService.start(config.dataDir);
    config.sandbox.egressAllow = [...config.sandbox.egressAllow, this.service.address];
    return [this.service];
  }
}
