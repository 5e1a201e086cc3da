import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import type { RetentionService } from './retention.service.ts';

const Period = Type.Optional(Type.Union([Type.String(), Type.Integer()]));
const RetentionBody = Type.Object({
  retention: Type.Object(
    { message: Period, list: Period, campaign: Period, mo: Period, lookup: Period },
    { additionalProperties: true },
  ),
});

const Setting = Type.String({
  description: 'how long it is kept: "6m", "30d"; "-1" keeps it',
  examples: ['6m'],
});
const Settings = Type.Object({
  message: Setting,
  list: Setting,
  campaign: Setting,
  mo: Setting,
  lookup: Setting,
});

export function retentionRoutes(app: App, retention: RetentionService): void {
  app.get('/retention', { schema: { response: answer({ data_retention: Settings }) } }, async (req) =>
    ok({ data_retention: await retention.get(caller(req)) }),
  );
  app.put(
    '/retention',
    { schema: { body: RetentionBody, response: answer({ retention: Settings }) } },
    async (req) => ok({ retention: await retention.put(caller(req), req.body.retention) }),
  );
}
