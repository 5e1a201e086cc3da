// What the prices' route answers (prices.routes.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer } from '../http/response-schemas.ts';

const accountPrices = {
  default: Type.Integer({
    description: 'credits per SMS part to a destination the price list does not name',
  }),
  by_country: Type.Record(Type.String({ pattern: '^[A-Z]{2}$' }), Type.Integer(), {
    description: 'credits per SMS part, by ISO 3166-1 alpha-2 country',
  }),
  prefixes: Type.Array(
    Type.Object({
      prefix: Type.String({ pattern: '^[0-9]+$', description: 'E.164 digits' }),
      credits: Type.Integer(),
    }),
    {
      description:
        "finer prices: a number starting with the longest of these prefixes costs its price, not its country's",
    },
  ),
};
/** GET /account/prices: what one SMS part costs the caller, per country and per finer prefix. */
export const AccountPrices = Type.Object(accountPrices);
export type AccountPricesView = Static<typeof AccountPrices>;

export const AccountPricesAnswer = answer(accountPrices);
