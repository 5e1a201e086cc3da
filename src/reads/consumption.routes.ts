import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
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

const ByCountry = Type.Record(Type.String(), Type.Integer(), {
  description: 'credits per country (ISO 3166 alpha-2)',
  examples: [{ FR: 12 }],
});
const Conso = Type.Object({ total: Type.Integer(), by_country: ByCountry });
const AccountConso = Type.Object({ account_id: Type.Integer(), company: Type.String(), conso: Conso });
const ConsumptionAnswer = answer({
  data: Type.Object({
    total: Type.Integer({ description: 'credits' }),
    by_country: ByCountry,
    my_account: AccountConso,
    by_sub_accounts: Type.Array(AccountConso),
    date_start: Type.String(),
    date_end: Type.String(),
  }),
});

export function consumptionRoutes(app: App, consumption: ConsumptionService): void {
  app.get(
    '/metrics/consumption',
    { schema: { querystring: ConsumptionQuery, response: ConsumptionAnswer } },
    async (req) => ok(await consumption.consumption(caller(req), req.query)),
  );
}
