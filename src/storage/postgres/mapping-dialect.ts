import { PostgresDialect } from 'kysely';
import type { DatabaseConnection, Driver, PostgresDialectConfig } from 'kysely';

/**
 * Kysely's PostgreSQL dialect whose every query (and connection attempt) rejects with
 * `mapError(err)` instead of the driver's error, so a read made while the database is out of
 * reach fails as UNAVAILABLE, as a write does, never as an internal error.
 */
export class MappingPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly mapError: (err: unknown) => unknown,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const map = this.mapError;
    const connection = (c: DatabaseConnection): DatabaseConnection =>
      new Proxy(c, {
        get(target, prop) {
          if (prop === 'executeQuery') {
            return async (...args: Parameters<DatabaseConnection['executeQuery']>) => {
              try {
                return await target.executeQuery(...args);
              } catch (err) {
                throw map(err);
              }
            };
          }
          // The driver's own (symbol-keyed) methods run on the connection they belong to.
          const v: unknown = Reflect.get(target, prop, target);
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    return new Proxy(driver, {
      get(target, prop) {
        if (prop === 'acquireConnection') {
          return async () => {
            try {
              return connection(await target.acquireConnection());
            } catch (err) {
              throw map(err);
            }
          };
        }
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
}
