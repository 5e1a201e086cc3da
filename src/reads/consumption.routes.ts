import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { ConsumptionAnswer } from './consumption.schemas.ts';
import type { ConsumptionService } from './consumption.service.ts';

// Every parameter is read as text and checked by the service, which names it in its -7; `country` may also be
// repeated (`country=FR&country=BE`), which arrives as an array.
const text = Type.Optional(Type.String());
const ConsumptionQuery = Type.Object({
  date_start: text,
  date_end: text,
  country: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  sub_account_id: text,
});

export function consumptionRoutes(app: App, consumption: ConsumptionService): void {
  app.get(
    '/metrics/consumption',
    { schema: { querystring: ConsumptionQuery, response: ConsumptionAnswer } },
    async (req) => ok(await consumption.consumption(caller(req), req.query)),
  );
}
