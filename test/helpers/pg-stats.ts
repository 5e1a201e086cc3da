// PostgreSQL's own counts of what a statement did to a table, for the tests of its plans. They are read before
// and after the statement, in one transaction: PostgreSQL 15's `pg_stat_xact_user_tables` also shows the
// connection's counts of earlier transactions that it has not yet flushed (at most once a second, later on a
// busy machine), such as the app's first reads of an empty table.
import { sql } from 'kysely';
import type { Executor } from '../../src/store/db.ts';

export interface TableCounts {
  /** Sequential scans. */
  seqScans: number;
  /** Rows handed over by index scans. */
  indexFetched: number;
  /** Rows updated, and of those, updated in place (HOT: no new index entry). */
  updated: number;
  hotUpdated: number;
}

/** What `work` adds to `table`'s counts, in its own transaction. */
export async function counted(
  db: Executor,
  table: string,
  work: (tx: Executor) => Promise<unknown>,
): Promise<TableCounts> {
  const read = async (tx: Executor): Promise<TableCounts> => {
    const { rows } = await sql<Record<keyof TableCounts, string>>`
      select seq_scan as "seqScans", coalesce(idx_tup_fetch, 0) as "indexFetched", n_tup_upd as updated,
        n_tup_hot_upd as "hotUpdated"
      from pg_stat_xact_user_tables where relid = ${table}::regclass`.execute(tx);
    const row = rows[0];
    return {
      seqScans: Number(row.seqScans),
      indexFetched: Number(row.indexFetched),
      updated: Number(row.updated),
      hotUpdated: Number(row.hotUpdated),
    };
  };
  return db.transaction().execute(async (tx) => {
    const before = await read(tx);
    await work(tx);
    const after = await read(tx);
    return {
      seqScans: after.seqScans - before.seqScans,
      indexFetched: after.indexFetched - before.indexFetched,
      updated: after.updated - before.updated,
      hotUpdated: after.hotUpdated - before.hotUpdated,
    };
  });
}
