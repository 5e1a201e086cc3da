// GET /statistics/daily: the caller's messages per day of TIMEZONE over the last days, by outcome, for the
// console's dashboard. A message counts on the day it is due (`due_at`: when the send queued it, or its
// `delay`), the date GET /messages gives it too; its outcome is where it stands now.
import { DateTime } from 'luxon';
import type { AuthContext } from '../shared/auth-context.ts';
import { wholeNumberIn } from '../shared/bounds.ts';
import type { Clock } from '../shared/clock.ts';
import type { Db } from '../store/db.ts';
import { wallLabel } from '../store/wall-clock.ts';
import { statisticsRepo } from './statistics.repo.ts';
import type { DayView } from './statistics.schemas.ts';

export const defaultStatisticsDays = 30;
export const maxStatisticsDays = 90;

/** Each state of a message (delivery's README) as the day's counters see it. */
const counterOf: Record<string, Exclude<keyof DayView, 'date' | 'sent'>> = {
  delivered: 'delivered',
  failed: 'failed',
  expired: 'expired',
  queued: 'pending',
  held: 'pending',
  sending: 'pending',
  submitted: 'pending',
  cancelled: 'cancelled',
};

export type StatisticsService = ReturnType<typeof createStatisticsService>;

export function createStatisticsService(deps: { db: Db; clock: Clock; timezone: string }) {
  const { db, clock, timezone } = deps;
  return {
    /**
     * The caller's messages per day over the last `days` days (1 to 90, 30 when absent) including today,
     * oldest first, every day present.
     */
    async daily(auth: AuthContext, query: { days?: string }): Promise<{ days: DayView[] }> {
      const count =
        query.days === undefined || query.days === ''
          ? defaultStatisticsDays
          : wholeNumberIn('days', query.days, { min: 1, max: maxStatisticsDays, unit: 'of days' });
      const today = DateTime.fromMillis(clock.now(), { zone: timezone }).startOf('day');
      const first = today.minus({ days: count - 1 });
      const from = first.toMillis();
      const to = today.plus({ days: 1 }).toMillis() - 1;
      const days = new Map<string, DayView>();
      for (let d = first; d <= today; d = d.plus({ days: 1 })) {
        const date = d.toFormat('yyyy-MM-dd');
        days.set(date, { date, sent: 0, delivered: 0, failed: 0, expired: 0, pending: 0, cancelled: 0 });
      }
      for (const row of await statisticsRepo.dailyStates(db, auth.accountId, timezone, from, to)) {
        const day = days.get(wallLabel(row.day, 'date'));
        const counter = counterOf[row.state];
        if (!day || !counter) continue;
        day[counter] += row.n;
        if (counter !== 'cancelled') day.sent += row.n;
      }
      return { days: [...days.values()] };
    },
  };
}
