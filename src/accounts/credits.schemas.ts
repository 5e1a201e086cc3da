// What the credits' routes answer (credits.routes.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer } from '../http/response-schemas.ts';

const credits = {
  credits: Type.Integer(),
  postpaid: Type.String({ enum: ['0', '1'], description: '"1": the balance may go below zero' }),
  credit_limit: Type.Optional(
    Type.Integer({ description: 'a postpaid account only: how far below zero its balance may go' }),
  ),
  unlimited: Type.String({ enum: ['0', '1'] }),
};
/** GET /credits: the balance, and whether the account is post-paid or unlimited. */
export const Credits = Type.Object(credits);
export type CreditsView = Static<typeof Credits>;

const transfer = {
  credits: Type.Integer({ description: "the caller's credits after" }),
  child_credits: Type.Integer({ description: "the sub-account's credits after" }),
};
/** POST /account/transfer: both balances after. */
export const Transfer = Type.Object(transfer);
export type TransferView = Static<typeof Transfer>;

export const CreditsAnswer = answer(credits);
export const TransferAnswer = answer(transfer);
