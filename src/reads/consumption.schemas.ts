// What GET /metrics/consumption answers (consumption.routes.ts), the consumption service's view. Imports
// nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer } from '../http/response-schemas.ts';

const ByCountry = Type.Record(Type.String(), Type.Integer(), {
  description: 'credits per country (ISO 3166 alpha-2)',
  examples: [{ FR: 12 }],
});

/** Credits in total and per country (alpha-2 keys, most used first). */
export const Conso = Type.Object({ total: Type.Integer(), by_country: ByCountry });
export type ConsoView = Static<typeof Conso>;

export const AccountConso = Type.Object({ account_id: Type.Integer(), company: Type.String(), conso: Conso });
export type AccountConsoView = Static<typeof AccountConso>;

export const Consumption = Type.Object({
  total: Type.Integer({ description: 'credits' }),
  by_country: ByCountry,
  my_account: AccountConso,
  by_sub_accounts: Type.Array(AccountConso),
  date_start: Type.String(),
  date_end: Type.String(),
});
/** `date_start` and `date_end` are Pigeon's addition: the days counted (both included). */
export type ConsumptionView = Static<typeof Consumption>;

export const ConsumptionAnswer = answer({ data: Consumption });
