// What the credits' routes answer (credits.routes.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer } from '../http/response-schemas.ts';

const credits = {
  credits: Type.Integer(),
  postpaid: Type.String({ examples: ['0'] }),
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
