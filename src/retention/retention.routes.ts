import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { DataRetentionAnswer, RetentionAnswer } from './retention.schemas.ts';
import type { RetentionService } from './retention.service.ts';

const Period = Type.Optional(Type.Union([Type.String(), Type.Integer()]));
const RetentionBody = Type.Object({
  retention: Type.Object(
    { message: Period, list: Period, campaign: Period, mo: Period, lookup: Period, survey: Period },
    { additionalProperties: true },
  ),
});

export function retentionRoutes(app: App, retention: RetentionService): void {
  app.get('/retention', { schema: { response: DataRetentionAnswer } }, async (req) =>
    ok({ data_retention: await retention.get(caller(req)) }),
  );
  app.put('/retention', { schema: { body: RetentionBody, response: RetentionAnswer } }, async (req) =>
    ok({ retention: await retention.put(caller(req), req.body.retention) }),
  );
}
