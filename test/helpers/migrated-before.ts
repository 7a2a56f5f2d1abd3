import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { migrations } from '../../src/storage/schema/migrations.js';

/**
 * A SQLite database file migrated up to the migration just before `migration` (a name such as
 * `0005_access_tokens`), for a test that fills it as an older gateway left it and then runs the
 * rest. Its raw handle; the caller closes it.
 * @throws Error when `migration` is unknown or the earlier migrations fail.
 */
export async function migratedBefore(file: string, migration: string): Promise<Database.Database> {
  const all = migrations('sqlite');
  const names = Object.keys(all).sort();
  const at = names.indexOf(migration);
  if (at < 1) throw new Error(`no migration before ${migration} (known: ${names.join(', ')})`);
  const raw = new Database(file);
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) });
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(all) },
  }).migrateTo(names[at - 1]!);
  if (error !== undefined)
    throw new Error(`migrations before ${migration} failed`, { cause: error });
  return raw;
}
