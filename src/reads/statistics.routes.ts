import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { DailyAnswer } from './statistics.schemas.ts';
import { maxStatisticsDays, type StatisticsService } from './statistics.service.ts';

const DailyQuery = Type.Object({
  days: Type.Optional(
    Type.String({
      description: `days to answer, today included: 1 to ${maxStatisticsDays} (30 when absent)`,
    }),
  ),
});

export function statisticsRoutes(app: App, statistics: StatisticsService): void {
  app.get(
    '/statistics/daily',
    {
      schema: {
        description:
          "The caller's messages per day of the configured time zone, oldest first, every day present: a message counts on the day it is due (its send, or its delay).",
        querystring: DailyQuery,
        response: DailyAnswer,
      },
    },
    async (req) => ok(await statistics.daily(caller(req), req.query)),
  );
}
