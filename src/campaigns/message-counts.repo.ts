// SQL of daily_message_counts: the messages each account had accepted per day, for DAILY_MESSAGE_LIMIT.
import { sql } from 'kysely';
import type { Executor } from '../store/db.ts';

export const dailyCountsRepo = {
  /**
   * Adds `count` to the account's day if the total stays within `limit`, in one statement: the row's lock
   * (PostgreSQL) or the one writer (SQLite) makes concurrent sends add in turn, each seeing the others'
   * committed counts. Returns the new total, or undefined when it would pass the limit (nothing changed).
   * `count` must itself be at most `limit`: a first row of the day is inserted without the check.
   */
  async add(tx: Executor, accountId: number, day: string, count: number, limit: number) {
    const row = await tx
      .insertInto('daily_message_counts')
      .values({ account_id: accountId, day, messages: count })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'day'])
          .doUpdateSet((eb) => ({
            messages: eb(eb.ref('daily_message_counts.messages'), '+', eb.ref('excluded.messages')),
          }))
          .where((eb) =>
            eb(eb(eb.ref('daily_message_counts.messages'), '+', eb.ref('excluded.messages')), '<=', limit),
          ),
      )
      .returning('messages')
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.messages);
  },

  async read(db: Executor, accountId: number, day: string): Promise<number> {
    const row = await db
      .selectFrom('daily_message_counts')
      .select('messages')
      .where('account_id', '=', accountId)
      .where('day', '=', day)
      .executeTakeFirst();
    return Number(row?.messages ?? 0);
  },

  /** Takes `count` back from the account's day, never below 0. */
  async subtract(tx: Executor, accountId: number, day: string, count: number): Promise<void> {
    await tx
      .updateTable('daily_message_counts')
      .set({
        messages: sql<number>`case when ${sql.ref('messages')} > ${count} then ${sql.ref('messages')} - ${count} else 0 end`,
      })
      .where('account_id', '=', accountId)
      .where('day', '=', day)
      .execute();
  },

  /** Deletes up to `limit` rows of days before `day` (`yyyy-MM-dd` sorts as dates do); returns how many. */
  async deleteBefore(db: Executor, day: string, limit: number): Promise<number> {
    const result =
      await sql`delete from ${sql.table('daily_message_counts')} where (${sql.ref('account_id')}, ${sql.ref('day')}) in (select ${sql.ref('account_id')}, ${sql.ref('day')} from ${sql.table('daily_message_counts')} where ${sql.ref('day')} < ${day} limit ${limit})`.execute(
        db,
      );
    return Number(result.numAffectedRows ?? 0);
  },
};
