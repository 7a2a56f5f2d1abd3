import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isGatehouseError } from '../../src/core/index.js';
import { PostgresDatabase } from '../../src/storage/postgres/postgres-database.js';
import {
  clusterUrl,
  missingPostgres,
  startServer,
  stopServer,
  useOwnCluster,
} from '../helpers/postgres.js';
import { skipWithout } from '../helpers/prerequisites.js';

// A cluster of this file's own: it is stopped and started again, which the run's shared one
// (other files' databases) must never be.
describe.skipIf(skipWithout('PostgreSQL', missingPostgres()))('PostgreSQL going away', () => {
  const cluster = useOwnCluster();

  const tenant = (id: string) => ({ id, name: id, created_at: '2026-01-01T00:00:00.000Z' });

  it('fails writes closed while it is down, and takes them again once it is back', async () => {
    const db = await PostgresDatabase.open({ url: clusterUrl(cluster(), 'postgres'), poolSize: 3 });
    const codes: string[] = [];
    db.onStorageError((c) => codes.push(c));
    try {
      const insert = (id: string) =>
        db.write((tx) => tx.insertInto('tenants').values(tenant(id)).execute());
      await insert('before');
      expect(db.storageProblem).toBeNull();

      stopServer(cluster());
      const refused = await insert('during').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isGatehouseError(refused, 'UNAVAILABLE')).toBe(true);
      expect((refused as Error).message).toMatch(/this request was not recorded/);
      expect(db.storageProblem).toMatch(/the database is out of reach/);
      expect(codes.length).toBeGreaterThan(0);
      // A read fails the same way (503, retryable), never as an internal error.
      const unread = await db.kysely
        .selectFrom('tenants')
        .selectAll()
        .execute()
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(isGatehouseError(unread, 'UNAVAILABLE')).toBe(true);

      startServer(cluster());
      // The node recovers without a restart: a probe finds the database again.
      for (let i = 0; i < 100 && db.storageProblem !== null; i++) await sleep(100);
      expect(db.storageProblem).toBeNull();
      await insert('after');
      const rows = await db.kysely.selectFrom('tenants').select('id').orderBy('id').execute();
      expect(rows.map((r) => r.id)).toEqual(['after', 'before']);
    } finally {
      await db.close();
    }
  });
});
