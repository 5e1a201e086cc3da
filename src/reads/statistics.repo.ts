// SQL of the account's message statistics: its messages counted per day of TIMEZONE and per state, read
// through the index of the account's messages by due date (migration 013). No rules here.

import { accountKey } from '../store/account-key.ts';
import type { Executor } from '../store/db.ts';
import { wallClockBucket } from '../store/wall-clock.ts';

export const statisticsRepo = {
  /**
   * The account's messages due within [from, to] (one range of `messages_account_due`, keyed on
   * `account_id + 0`), counted per wall-clock day of `zone` (the day's start as
   * wall-clock milliseconds, see store/wall-clock.ts) and per state.
   */
  async dailyStates(db: Executor, accountId: number, zone: string, from: number, to: number) {
    const day = wallClockBucket('due_at', zone, 'day', from, to);
    const rows = await db
      .selectFrom('messages')
      .select((eb) => [day.as('day'), 'state', eb.fn.countAll<number>().as('n')])
      .where(accountKey, '=', accountId)
      .where('due_at', '>=', from)
      .where('due_at', '<=', to)
      .groupBy([day, 'state'])
      .execute();
    return rows.map((r) => ({ day: Number(r.day), state: r.state, n: Number(r.n) }));
  },
};
