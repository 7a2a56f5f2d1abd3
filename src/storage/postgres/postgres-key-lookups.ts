import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Tables } from '../schema/tables.js';

interface Lookup {
  tenant: string;
  principal: string;
  key: string;
  resolve: (record: string | undefined) => void;
  reject: (err: unknown) => void;
}

/**
 * The idempotency-key lookups of one event-loop turn, made in one statement: every call looks its
 * key up before it runs, and under load a round trip each (a connection, a parse, a reply) costs
 * more of the node's time than the lookup itself. Each lookup answers the newest attempt stored
 * for its key when the statement ran, as a lookup of its own would.
 */
export class KeyLookups {
  private pending: Lookup[] = [];

  constructor(private readonly kysely: Kysely<Tables>) {}

  /** The record JSON of the newest attempt of `key`, or undefined. */
  find(tenant: string, principal: string, key: string): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ tenant, principal, key, resolve, reject }) === 1)
        setImmediate(() => void this.run());
    });
  }

  private async run(): Promise<void> {
    const lookups = this.pending;
    this.pending = [];
    try {
      const { rows } = await sql<{
        tenant: string;
        principal: string;
        idempotency_key: string;
        record: string;
      }>`select distinct on (tenant, principal, idempotency_key)
           tenant, principal, idempotency_key, record
         from invocations
         where (tenant, principal, idempotency_key) in (
           select * from unnest(
             ${lookups.map((l) => l.tenant)}::text[],
             ${lookups.map((l) => l.principal)}::text[],
             ${lookups.map((l) => l.key)}::text[]))
         order by tenant, principal, idempotency_key, attempt desc`.execute(this.kysely);
      const found = new Map(
        rows.map((r) => [JSON.stringify([r.tenant, r.principal, r.idempotency_key]), r.record]),
      );
      for (const l of lookups) l.resolve(found.get(JSON.stringify([l.tenant, l.principal, l.key])));
    } catch (err) {
      for (const l of lookups) l.reject(err);
    }
  }
}
