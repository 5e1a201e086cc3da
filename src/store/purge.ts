// Bounded deletes, each one statement touching at most `limit` rows so a backlog never holds the write lock
// long: retention's, by account and age, and pruning's, for append-only logs (webhook attempts, clicks, orphan
// receipts), whose rows are written in time order so that the lowest ids are the oldest rows.
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

export interface AppendOnlyLog {
  table: keyof Database;
  /** The column that dates a row (epoch ms), growing with the id. */
  dateColumn: string;
}

/**
 * Deletes, among the `limit` lowest ids of the log (those up to `throughId` when given), the rows dated
 * before `before`; returns how many went. One statement that reads `limit` rows of the primary key and
 * nothing else: fewer than `limit` deleted means the oldest rows left are not old enough, and the pass is
 * over (a row written out of order by a few milliseconds waits for the next pass).
 */
export async function pruneOldest(
  db: Executor,
  log: AppendOnlyLog,
  before: number,
  limit: number,
  throughId?: number,
): Promise<number> {
  const table = sql.table(log.table);
  const through = throughId === undefined ? sql`` : sql`where id <= ${throughId}`;
  const result =
    await sql`delete from ${table} where id in (select id from ${table} ${through} order by id limit ${limit}) and ${sql.ref(log.dateColumn)} < ${before}`.execute(
      db,
    );
  return Number(result.numAffectedRows ?? 0);
}
