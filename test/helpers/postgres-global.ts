import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PostgresCluster } from './postgres.js';
import { POSTGRES_ROOT_ENV, destroyCluster, makeRoot } from './postgres.js';

/**
 * Vitest global setup: a directory for the run's PostgreSQL cluster, which the first test file
 * that needs one starts (test/helpers/postgres.ts); the teardown stops it and deletes it. A run
 * without PostgreSQL tests starts none.
 */
export default function setup(): () => void {
  const root = makeRoot();
  process.env[POSTGRES_ROOT_ENV] = root;
  return () => {
    const ready = join(root, 'cluster.json');
    try {
      if (existsSync(ready)) {
        destroyCluster(JSON.parse(readFileSync(ready, 'utf8')) as PostgresCluster);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}
