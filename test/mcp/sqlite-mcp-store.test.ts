import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteAuditStore, SqliteDatabase, SqliteMcpStore } from '../../src/storage/index.js';
import { mcpStoreContract } from '../contracts/mcp-store.contract.js';

mcpStoreContract('SqliteMcpStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-mcp-store-'));
  const db = await SqliteDatabase.open({ file: join(dir, 'g.db') });
  return {
    store: new SqliteMcpStore(db),
    audit: new SqliteAuditStore(db),
    close: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
