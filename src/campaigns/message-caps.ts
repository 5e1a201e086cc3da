// An account's message quotas: the messages it may have accepted per day and per month (a send's `sent`: the
// recipients kept after filtering, whatever their parts), days and months running in TIMEZONE. Each account's
// limits come from the limits room (its own, its parent's, else DAILY_MESSAGE_LIMIT and MONTHLY_MESSAGE_LIMIT),
// 0 being none. A count is a row per account and period, raised in the send's own transaction, so concurrent
// sends (in any process) are counted exactly and a send rolled back (-3, say) counts nothing. An account
// without a quota is counted nothing and costs no statement.
import { DateTime } from 'luxon';
import { ApiError } from '../shared/errors.ts';
import type { Executor } from '../store/db.ts';
import { type CountsTable, messageCountsRepo } from './message-counts.repo.ts';

/** One quota of an account: its limit (0: none) and how a refusal names it (`DAILY_MESSAGE_LIMIT`, …). */
export interface Quota {
  limit: number;
  name: string;
}

/** An account's quotas, as the limits room resolved them. */
export interface Quotas {
  daily: Quota;
  monthly: Quota;
}

export type MessageCaps = ReturnType<typeof createMessageCaps>;

interface Period {
  table: CountsTable;
  quota: (q: Quotas) => Quota;
  /** The period's key and bounds around an instant. */
  unit: 'day' | 'month';
  format: string;
  /** How a refusal says it: "per day", "today". */
  per: string;
  current: string;
}

const day: Period = {
  table: 'daily_message_counts',
  quota: (q) => q.daily,
  unit: 'day',
  format: 'yyyy-MM-dd',
  per: 'per day',
  current: 'today',
};
const month: Period = {
  table: 'monthly_message_counts',
  quota: (q) => q.monthly,
  unit: 'month',
  format: 'yyyy-MM',
  per: 'per month',
  current: 'this month',
};

export function createMessageCaps(options: { timezone: string }) {
  const { timezone } = options;
  // The period of the last instant asked about, with its bounds: sends of one day compute it once.
  const known = new Map<Period, { from: number; to: number; key: string }>();

  function keyOf(period: Period, ms: number): string {
    const last = known.get(period);
    if (last && ms >= last.from && ms < last.to) return last.key;
    const start = DateTime.fromMillis(ms, { zone: timezone }).startOf(period.unit);
    const next = {
      from: start.toMillis(),
      to: start.plus({ [`${period.unit}s`]: 1 }).toMillis(),
      key: start.toFormat(period.format),
    };
    known.set(period, next);
    return next.key;
  }

  function refuse(
    period: Period,
    quota: Quota,
    accountId: number,
    key: string,
    used: number,
    count: number,
  ): never {
    throw ApiError.data(
      `${quota.name}: account ${accountId} may have ${quota.limit} messages accepted ${period.per}; ${used} were accepted ${period.current} (${key}, ${timezone}) and this send has ${count}, ${used + count - quota.limit} too many`,
    );
  }

  async function takeOne(
    tx: Executor,
    period: Period,
    accountId: number,
    now: number,
    count: number,
    quotas: Quotas,
  ) {
    const quota = period.quota(quotas);
    if (quota.limit === 0 || count === 0) return;
    const key = keyOf(period, now);
    if (
      count <= quota.limit &&
      (await messageCountsRepo.add(tx, period.table, accountId, key, count, quota.limit)) !== undefined
    )
      return;
    refuse(
      period,
      quota,
      accountId,
      key,
      await messageCountsRepo.read(tx, period.table, accountId, key),
      count,
    );
  }

  return {
    /** Counts a send's messages on the day and month of `now`, in its transaction; -7 when they pass a quota. */
    async take(tx: Executor, accountId: number, now: number, count: number, quotas: Quotas): Promise<void> {
      await takeOne(tx, day, accountId, now, count, quotas);
      await takeOne(tx, month, accountId, now, count, quotas);
    },

    /**
     * Counts the messages of sends written together, once per account and day and once per account and month;
     * false, having counted nothing more, when an account's would pass a quota (the caller rolls back and takes
     * them one by one, which refuses exactly the sends past it).
     */
    async takeMany(
      tx: Executor,
      sends: readonly { accountId: number; now: number; count: number; quotas: Quotas }[],
    ): Promise<boolean> {
      for (const period of [day, month]) {
        const counts = new Map<string, { accountId: number; key: string; count: number; limit: number }>();
        for (const { accountId, now, count, quotas } of sends) {
          const limit = period.quota(quotas).limit;
          if (limit === 0 || count === 0) continue;
          const key = keyOf(period, now);
          const id = `${accountId} ${key}`;
          const entry = counts.get(id);
          if (entry) entry.count += count;
          else counts.set(id, { accountId, key, count, limit });
        }
        // In one order (account, then period), as the paying accounts are debited after them (credits.debitMany):
        // the groups of two API processes committing at once never wait on each other crosswise.
        const ordered = [...counts.values()].sort(
          (a, b) => a.accountId - b.accountId || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
        );
        for (const { accountId, key, count, limit } of ordered) {
          if (count > limit) return false;
          if ((await messageCountsRepo.add(tx, period.table, accountId, key, count, limit)) === undefined)
            return false;
        }
      }
      return true;
    },

    /** What a simulation answers: -7 when the real send would pass a quota now; counts nothing. */
    async check(db: Executor, accountId: number, now: number, count: number, quotas: Quotas): Promise<void> {
      for (const period of [day, month]) {
        const quota = period.quota(quotas);
        if (quota.limit === 0 || count === 0) continue;
        const key = keyOf(period, now);
        const used = await messageCountsRepo.read(db, period.table, accountId, key);
        if (used + count > quota.limit) refuse(period, quota, accountId, key, used, count);
      }
    },

    /**
     * A cancelled campaign gives its messages back to the day and month it was accepted in (`createdAt`): an
     * update of no row when the account had no quota then.
     */
    async giveBack(tx: Executor, accountId: number, createdAt: number, count: number): Promise<void> {
      if (count === 0) return;
      for (const period of [day, month]) {
        await messageCountsRepo.subtract(tx, period.table, accountId, keyOf(period, createdAt), count);
      }
    },

    /**
     * Deletes up to `batch` counts of the days before yesterday and the months before last month (of `now`, in
     * TIMEZONE): only the current period's count is ever checked, and the previous one is kept for a cancel
     * around midnight (or the month's end) to give back to. Returns how many went.
     */
    async prune(db: Executor, now: number, batch = 1000): Promise<number> {
      const at = DateTime.fromMillis(now, { zone: timezone });
      const days = await messageCountsRepo.deleteBefore(
        db,
        day.table,
        at.minus({ days: 1 }).toFormat(day.format),
        batch,
      );
      const months = await messageCountsRepo.deleteBefore(
        db,
        month.table,
        at.minus({ months: 1 }).toFormat(month.format),
        batch,
      );
      return days + months;
    },
  };
}
