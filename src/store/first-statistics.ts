// PostgreSQL plans a statement from its tables' statistics, which autovacuum gathers only at its next round
// (every minute by default) once a table has changed enough. Until a table's first ANALYZE the planner knows
// its size but nothing of its columns, and takes a lookup of a few hundred keys (a batch of receipts by SMSC
// id) to match most of the table: it then reads a fast-growing queue whole at every batch. So a new database
// (a first start, a `pigeon move`) has each hot table analyzed as soon as it holds rows; after that, and on
// SQLite, this does nothing.
import { sql } from 'kysely';
import type { Log } from '../shared/log.ts';
import { createPeriodicJob, type PeriodicJob } from '../shared/periodic-job.ts';
import type { Db, DialectName } from './db.ts';
import type { Database } from './schema.ts';

/** The tables whose statements take keys by the hundred, fastest growing first. */
const hotTables = [
  'message_parts',
  'messages',
  'events',
  'webhook_deliveries',
  'campaigns',
  'links',
] as const satisfies readonly (keyof Database)[];

/** Rows a table holds before its first ANALYZE is worth it: below, reading it whole costs nothing. */
const minRows = 1000;

/** Analyzes, once each, the hot tables that hold rows and were never analyzed; stops once all were. */
export function createFirstStatistics(deps: { db: Db; dialect: DialectName; log: Log }): PeriodicJob {
  const { db, log } = deps;
  const pending = new Set<string>(deps.dialect === 'postgres' ? hotTables : []);
  return createPeriodicJob({
    name: 'first statistics',
    everyMs: 2000,
    log,
    async pass() {
      if (pending.size === 0) return;
      const { rows } = await sql<{ table: string; rows: number; analyzed: boolean }>`
        select relname as table, n_live_tup as rows,
          (last_analyze is not null or last_autoanalyze is not null) as analyzed
        from pg_stat_user_tables
        where schemaname = current_schema() and relname in (${sql.join([...pending])})`.execute(db);
      for (const row of rows) {
        if (row.analyzed) pending.delete(row.table);
        else if (Number(row.rows) >= minRows) {
          await sql`analyze ${sql.table(row.table)}`.execute(db);
          pending.delete(row.table);
          log.info(
            { table: row.table, rows: Number(row.rows) },
            'first statistics of a growing table gathered',
          );
        }
      }
    },
  });
}
