// SQL for `account_limits` (the operator's limits of each account) and `account_pacing` (where each paced
// account's last accepted part's slot ends). No rules here.
import { sql } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { OwnLimits } from './account-limits.ts';

const columns = [
  'account_id',
  'daily_messages',
  'monthly_messages',
  'requests_per_second',
  'parts_per_second',
  'countries',
] as const;

export const limitsRepo = {
  /** The own limits of these accounts (an account and its parent), by account; none for an account without. */
  async own(db: Executor, accountIds: readonly number[]): Promise<Map<number, OwnLimits>> {
    const rows = await db
      .selectFrom('account_limits')
      .select(columns)
      .where('account_id', 'in', accountIds)
      .execute();
    return new Map(
      rows.map((r) => [
        Number(r.account_id),
        {
          daily_messages: r.daily_messages === null ? null : Number(r.daily_messages),
          monthly_messages: r.monthly_messages === null ? null : Number(r.monthly_messages),
          requests_per_second: r.requests_per_second === null ? null : Number(r.requests_per_second),
          parts_per_second: r.parts_per_second === null ? null : Number(r.parts_per_second),
          countries: r.countries,
        },
      ]),
    );
  },

  /** Sets the account's own limits to `limits` whole (a row of nulls is removed: the account inherits all). */
  async write(tx: Executor, accountId: number, limits: OwnLimits, now: number): Promise<void> {
    if (Object.values(limits).every((v) => v === null)) {
      await tx.deleteFrom('account_limits').where('account_id', '=', accountId).execute();
      return;
    }
    await tx
      .insertInto('account_limits')
      .values({ account_id: accountId, ...limits, updated_at: now })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ ...limits, updated_at: now }))
      .execute();
  },

  /**
   * Books `durationMs` of the account's pacing from the later of its last slot's end and `now`, in one
   * statement (the row's lock, or SQLite's one writer, orders concurrent sends); answers where the booking starts.
   */
  async book(tx: Executor, accountId: number, now: number, durationMs: number): Promise<number> {
    const until = sql.ref('account_pacing.paced_until');
    const result = await sql<{
      paced_until: number;
    }>`insert into ${sql.table('account_pacing')} (${sql.ref('account_id')}, ${sql.ref('paced_until')})
      values (${accountId}, ${now + durationMs})
      on conflict (${sql.ref('account_id')}) do update
      set ${sql.ref('paced_until')} = (case when ${until} > ${now} then ${until} else ${now} end) + ${durationMs}
      returning ${sql.ref('paced_until')}`.execute(tx);
    return Number(result.rows[0].paced_until) - durationMs;
  },
};
