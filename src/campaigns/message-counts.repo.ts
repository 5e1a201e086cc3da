// SQL of daily_message_counts and monthly_message_counts: the messages each account had accepted per day and per
// month, for its daily and monthly quotas. The two tables have one shape: (account_id, period, messages).
import { sql } from 'kysely';
import type { Executor } from '../store/db.ts';

export type CountsTable = 'daily_message_counts' | 'monthly_message_counts';

/** The period column of each table: `day` (`yyyy-MM-dd`), `month` (`yyyy-MM`); both sort as dates do. */
const periodColumn = { daily_message_counts: 'day', monthly_message_counts: 'month' } as const;

export const messageCountsRepo = {
  /**
   * Adds `count` to the account's period if the total stays within `limit`, in one statement: the row's lock
   * (PostgreSQL) or the one writer (SQLite) makes concurrent sends add in turn, each seeing the others'
   * committed counts. Returns the new total, or undefined when it would pass the limit (nothing changed).
   * `count` must itself be at most `limit`: a first row of the period is inserted without the check.
   */
  async add(
    tx: Executor,
    table: CountsTable,
    accountId: number,
    period: string,
    count: number,
    limit: number,
  ) {
    const column = sql.ref(periodColumn[table]);
    const total = sql`${sql.table(table)}.${sql.ref('messages')} + ${sql.ref('excluded.messages')}`;
    const result = await sql<{
      messages: number;
    }>`insert into ${sql.table(table)} (${sql.ref('account_id')}, ${column}, ${sql.ref('messages')})
      values (${accountId}, ${period}, ${count})
      on conflict (${sql.ref('account_id')}, ${column}) do update set ${sql.ref('messages')} = ${total}
      where ${total} <= ${limit}
      returning ${sql.ref('messages')}`.execute(tx);
    const row = result.rows[0];
    return row === undefined ? undefined : Number(row.messages);
  },

  async read(db: Executor, table: CountsTable, accountId: number, period: string): Promise<number> {
    const result = await sql<{ messages: number }>`select ${sql.ref('messages')} from ${sql.table(table)}
      where ${sql.ref('account_id')} = ${accountId} and ${sql.ref(periodColumn[table])} = ${period}`.execute(
      db,
    );
    return Number(result.rows[0]?.messages ?? 0);
  },

  /** Takes `count` back from the account's period, never below 0. */
  async subtract(tx: Executor, table: CountsTable, accountId: number, period: string, count: number) {
    const messages = sql.ref('messages');
    await sql`update ${sql.table(table)}
      set ${messages} = case when ${messages} > ${count} then ${messages} - ${count} else 0 end
      where ${sql.ref('account_id')} = ${accountId} and ${sql.ref(periodColumn[table])} = ${period}`.execute(
      tx,
    );
  },

  /** Deletes up to `limit` rows of periods before `period`; returns how many. */
  async deleteBefore(db: Executor, table: CountsTable, period: string, limit: number): Promise<number> {
    const column = sql.ref(periodColumn[table]);
    const result =
      await sql`delete from ${sql.table(table)} where (${sql.ref('account_id')}, ${column}) in (select ${sql.ref('account_id')}, ${column} from ${sql.table(table)} where ${column} < ${period} limit ${limit})`.execute(
        db,
      );
    return Number(result.numAffectedRows ?? 0);
  },
};
