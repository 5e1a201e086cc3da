// Retention's bounded delete, the same for every table that keeps rows by account and age.
import { sql } from 'kysely';
import type { Executor } from './db.ts';
import type { Database } from './schema.ts';

export interface AgedRows {
  table: keyof Database;
  /** The column that dates a row (epoch ms). */
  column: string;
  /**
   * How the account is matched: the plain column, or `account_id + 0` for tables whose account index is
   * on that expression (so that no other query's plan takes it).
   */
  account: 'column' | 'expression';
}

/** Deletes up to `limit` of the account's rows dated before `before`; returns how many went. */
export async function deleteAged(
  db: Executor,
  rows: AgedRows,
  accountId: number,
  before: number,
  limit: number,
): Promise<number> {
  const table = sql.table(rows.table);
  const account = rows.account === 'column' ? sql.ref('account_id') : sql`${sql.ref('account_id')} + 0`;
  const result =
    await sql`delete from ${table} where id in (select id from ${table} where ${account} = ${accountId} and ${sql.ref(rows.column)} < ${before} limit ${limit})`.execute(
      db,
    );
  return Number(result.numAffectedRows ?? 0);
}
