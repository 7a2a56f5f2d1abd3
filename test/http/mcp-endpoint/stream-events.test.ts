import { MemoryStreamEventStore } from '../../../src/http/mcp-endpoint/memory-stream-events.js';
import { mcpStreamEventStoreContract } from '../../contracts/mcp-stream-event-store.contract.js';

// The in-memory store of a gateway that serves alone; test/storage/postgres-stores.test.ts runs
// the same contract on the shared one.
mcpStreamEventStoreContract('MemoryStreamEventStore', (limits, now) =>
  Promise.resolve({
    store: new MemoryStreamEventStore(limits, now),
    close: () => Promise.resolve(),
  }),
);
