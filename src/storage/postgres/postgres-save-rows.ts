import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Tables } from '../schema/tables.js';
import { OUTBOX_CHANNEL } from './outbox-listener.js';
import type { LedgerRows } from './postgres-ledger.js';
import type { Transaction } from './group-commit.js';

/** The invocation rows of a batch of steps: new calls, changed ones, and their receipts. */
export interface InvocationRows {
  fresh: Tables['invocations'][];
  updated: Tables['invocations'][];
  receipts: Tables['receipts'][];
}

/** A table's columns and their PostgreSQL types, in the order their arrays are sent. */
type Columns<T> = readonly (readonly [keyof T & string, string])[];

const INVOCATION_COLUMNS: Columns<Tables['invocations']> = [
  ['id', 'text'],
  ['tenant', 'text'],
  ['principal', 'text'],
  ['idempotency_key', 'text'],
  ['attempt', 'integer'],
  ['request_hash', 'text'],
  ['status', 'text'],
  ['tool_id', 'text'],
  ['record', 'text'],
  ['created_at', 'text'],
  ['updated_at', 'text'],
  ['node', 'text'],
  ['tool_name', 'text'],
  ['agent_id', 'text'],
  ['environment', 'text'],
];
const AUDIT_COLUMNS: Columns<Tables['audit_records']> = [
  ['tenant', 'text'],
  ['idx', 'bigint'],
  ['record', 'text'],
  ['leaf_hash', 'text'],
];
const NODE_COLUMNS: Columns<Tables['audit_nodes']> = [
  ['tenant', 'text'],
  ['level', 'integer'],
  ['idx', 'bigint'],
  ['hash', 'bytea'],
];
const OUTBOX_COLUMNS: Columns<Omit<Tables['outbox'], 'seq'>> = [
  ['tenant', 'text'],
  ['type', 'text'],
  ['subject', 'text'],
  ['at', 'text'],
  ['data', 'text'],
  ['owner', 'text'],
];
const RECEIPT_COLUMNS: Columns<Tables['receipts']> = [
  ['invocation_id', 'text'],
  ['tenant', 'text'],
  ['envelope', 'text'],
];

/**
 * `insert into table (columns) select … from unnest(arrays)`, in the rows' order: a column's
 * values go as one array parameter, so the statement's text is the same whatever the number of
 * rows (PostgreSQL parses and plans a few parameters, not one per value of every row).
 */
function insertRows<T>(
  table: string,
  columns: Columns<T>,
  rows: readonly T[],
): RawBuilder<unknown> {
  const names = sql.join(columns.map(([c]) => sql.id(c)));
  const arrays = sql.join(
    columns.map(
      ([c, type]) => sql`${rows.map((r) => r[c as keyof T] ?? null)}::${sql.raw(type)}[]`,
    ),
  );
  return sql`insert into ${sql.id(table)} (${names})
    select ${names} from unnest(${arrays}) with ordinality as u(${names}, ord) order by ord`;
}

/**
 * Inserts the ledger rows and invocation rows of a batch of steps in `tx`, in one statement (a
 * data-modifying `with` per table, its rows as arrays). The tenants' tree heads are locked from
 * the reservation of the audit indices until commit (and the batch holds the database's write lock
 * throughout), so each round trip here, and the time the server takes to parse and plan it, is
 * time every other node waits.
 * @returns how many new calls were inserted (one whose key or id is stored already is skipped).
 */
export async function insertSaveRows(
  tx: Transaction,
  ledger: LedgerRows,
  rows: InvocationRows,
): Promise<number> {
  // Each data-modifying `with` runs whether or not the final select reads it (an empty array
  // inserts nothing); `fresh` is counted, as the count of what it inserted is the answer.
  const r = await sql<{ inserted: number }>`
    with fresh as (${insertRows('invocations', INVOCATION_COLUMNS, rows.fresh)}
        on conflict do nothing returning id),
      a as (${insertRows('audit_records', AUDIT_COLUMNS, ledger.audit)}),
      n as (${insertRows('audit_nodes', NODE_COLUMNS, ledger.nodes)}),
      o as (${insertRows('outbox', OUTBOX_COLUMNS, ledger.outbox)}),
      u as (${insertRows('invocations', INVOCATION_COLUMNS, rows.updated)}
        on conflict (id) do update set status = excluded.status, record = excluded.record,
          updated_at = excluded.updated_at, node = excluded.node),
      r as (${insertRows('receipts', RECEIPT_COLUMNS, rows.receipts)}
        on conflict (invocation_id) do update set envelope = excluded.envelope)
    select (select count(*) from fresh) as inserted,
      -- Delivered at commit (once per transaction): other nodes' event streams read the outbox.
      case when ${ledger.outbox.length > 0} then pg_notify(${OUTBOX_CHANNEL}, '') end as notified`.execute(
    tx,
  );
  return Number(r.rows[0]!.inserted);
}
