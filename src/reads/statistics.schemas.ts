// What GET /statistics/daily answers (statistics.routes.ts); `DayView` is the statistics service's day and
// the console's dashboard's. Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer } from '../http/response-schemas.ts';

const count = (description: string) => Type.Integer({ description });

/** One day of GET /statistics/daily. */
export const Day = Type.Object({
  date: Type.String({ description: 'a day `Y-m-d` in the configured time zone', examples: ['2026-11-23'] }),
  sent: count('messages due that day, all but cancelled ones: delivered + failed + expired + pending'),
  delivered: count('DLR 3'),
  failed: count('final and not delivered: DLR 2, 4, 5, 6, 7, 9, 11, or 0 (erased before it was sent)'),
  expired: count('DLR 12'),
  pending: count('not final yet: waiting to be sent, or for its receipt (DLR 1)'),
  cancelled: count('cancelled before it was sent (DLR 0), not counted in sent'),
});
export type DayView = Static<typeof Day>;

export const DailyAnswer = answer({ days: Type.Array(Day) });
