// DAILY_MESSAGE_LIMIT: the messages an account may have accepted per day (a send's `sent`: the recipients
// kept after filtering, whatever their parts), days running midnight to midnight in TIMEZONE. The count is
// a row per account and day, raised in the send's own transaction, so concurrent sends (in any process)
// are counted exactly and a send rolled back (-3, say) counts nothing.
import { DateTime } from 'luxon';
import { ApiError } from '../shared/errors.ts';
import type { Executor } from '../store/db.ts';
import { dailyCountsRepo } from './daily-counts.repo.ts';

export type DailyCap = ReturnType<typeof createDailyCap>;

/** `limit` 0 switches the cap off: nothing is counted and no statement is run. */
export function createDailyCap(options: { limit: number; timezone: string }) {
  const { limit, timezone } = options;
  // The day of the last instant asked about, with its bounds: sends of one day compute it once.
  let known = { from: Number.POSITIVE_INFINITY, to: Number.NEGATIVE_INFINITY, day: '' };

  function dayOf(ms: number): string {
    if (ms >= known.from && ms < known.to) return known.day;
    const start = DateTime.fromMillis(ms, { zone: timezone }).startOf('day');
    known = {
      from: start.toMillis(),
      to: start.plus({ days: 1 }).toMillis(),
      day: start.toFormat('yyyy-MM-dd'),
    };
    return known.day;
  }

  function refuse(accountId: number, day: string, used: number, count: number): never {
    throw ApiError.data(
      `DAILY_MESSAGE_LIMIT: account ${accountId} may have ${limit} messages accepted per day; ${used} were accepted today (${day}, ${timezone}) and this send has ${count}, ${used + count - limit} too many`,
    );
  }

  return {
    enabled: limit > 0,

    /** Counts a send's messages on the day of `now`, in its transaction; -7 when they pass the cap. */
    async take(tx: Executor, accountId: number, now: number, count: number): Promise<void> {
      if (limit === 0 || count === 0) return;
      const day = dayOf(now);
      if (count <= limit && (await dailyCountsRepo.add(tx, accountId, day, count, limit)) !== undefined)
        return;
      refuse(accountId, day, await dailyCountsRepo.read(tx, accountId, day), count);
    },

    /**
     * Counts the messages of sends written together, once per account and day; false, having counted
     * nothing more, when an account's would pass the cap (the caller rolls back and takes them one by one,
     * which refuses exactly the sends past it).
     */
    async takeMany(
      tx: Executor,
      sends: readonly { accountId: number; now: number; count: number }[],
    ): Promise<boolean> {
      if (limit === 0) return true;
      const counts = new Map<string, { accountId: number; day: string; count: number }>();
      for (const { accountId, now, count } of sends) {
        const day = dayOf(now);
        const key = `${accountId} ${day}`;
        const entry = counts.get(key);
        if (entry) entry.count += count;
        else counts.set(key, { accountId, day, count });
      }
      // In one order (account, then day), as the paying accounts are debited after them (credits.debitMany): the
      // groups of two API processes committing at once never wait on each other crosswise.
      const ordered = [...counts.values()].sort(
        (a, b) => a.accountId - b.accountId || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0),
      );
      for (const { accountId, day, count } of ordered) {
        if (count === 0) continue;
        if (count > limit || (await dailyCountsRepo.add(tx, accountId, day, count, limit)) === undefined) {
          return false;
        }
      }
      return true;
    },

    /** What a simulation answers: -7 when the real send would pass the cap now; counts nothing. */
    async check(db: Executor, accountId: number, now: number, count: number): Promise<void> {
      if (limit === 0 || count === 0) return;
      const day = dayOf(now);
      const used = await dailyCountsRepo.read(db, accountId, day);
      if (used + count > limit) refuse(accountId, day, used, count);
    },

    /** A cancelled campaign gives its messages back to the day it was accepted on (`createdAt`). */
    async giveBack(tx: Executor, accountId: number, createdAt: number, count: number): Promise<void> {
      if (limit === 0 || count === 0) return;
      await dailyCountsRepo.subtract(tx, accountId, dayOf(createdAt), count);
    },

    /**
     * Deletes up to `batch` counts of the days before yesterday (of `now`, in TIMEZONE): only today's count
     * is ever checked, and yesterday's is kept for a cancel around midnight to give back to. Returns how
     * many went.
     */
    prune(db: Executor, now: number, batch = 1000): Promise<number> {
      const before = DateTime.fromMillis(now, { zone: timezone }).minus({ days: 1 }).toFormat('yyyy-MM-dd');
      return dailyCountsRepo.deleteBefore(db, before, batch);
    },
  };
}
