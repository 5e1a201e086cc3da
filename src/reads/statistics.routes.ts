import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import { maxStatisticsDays, type StatisticsService } from './statistics.service.ts';

const DailyQuery = Type.Object({
  days: Type.Optional(
    Type.String({
      description: `days to answer, today included: 1 to ${maxStatisticsDays} (30 when absent)`,
    }),
  ),
});

const count = (description: string) => Type.Integer({ description });
const Day = Type.Object({
  date: Type.String({ description: 'a day `Y-m-d` in the configured time zone', examples: ['2026-11-23'] }),
  sent: count('messages due that day, all but cancelled ones: delivered + failed + expired + pending'),
  delivered: count('DLR 3'),
  failed: count('final and not delivered: DLR 2, 4, 5, 6, 7, 9, 11, or 0 (erased before it was sent)'),
  expired: count('DLR 12'),
  pending: count('not final yet: waiting to be sent, or for its receipt (DLR 1)'),
  cancelled: count('cancelled before it was sent (DLR 0), not counted in sent'),
});

export function statisticsRoutes(app: App, statistics: StatisticsService): void {
  app.get(
    '/statistics/daily',
    {
      schema: {
        description:
          "The caller's messages per day of the configured time zone, oldest first, every day present: a message counts on the day it is due (its send, or its delay).",
        querystring: DailyQuery,
        response: answer({ days: Type.Array(Day) }),
      },
    },
    async (req) => ok(await statistics.daily(caller(req), req.query)),
  );
}
