// What the accounts' routes answer (accounts.routes.ts): an account as GET /account and the sub-account
// reads show it. `AccountView` is the accounts service's answer and the console's. Imports nothing but
// typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Flag, Id, Nullable, StringEnum } from '../http/response-schemas.ts';

export const Account = Type.Object({
  client_id: Id,
  email: Type.String(),
  firstname: Type.String(),
  lastname: Type.String(),
  company: Type.String(),
  type: Type.String(),
  phone: Type.String(),
  address1: Type.String(),
  address2: Type.String(),
  zip: Type.String(),
  city: Type.String(),
  country: Type.String(),
  country_code: Type.String(),
  lang: Type.String(),
  credits: Type.Integer(),
  postpaid: Type.String({
    enum: ['0', '1'],
    description: '"1": postpaid, the balance may go below zero down to its credit limit (as in GET /credits)',
  }),
  unlimited: Flag,
  description: Type.String(),
  senderid: Nullable(Type.String()),
  status: Type.Integer(),
  state: StringEnum(['active', 'locked'], { description: '"locked" while its parent has locked it' }),
  sender: Type.String(),
});
export type AccountView = Static<typeof Account>;

export const AccountAnswer = answer({ account: Account });
export const CreatedSubAccountAnswer = answer({ id: Id, active: Flag });
export const SubAccountsAnswer = answer({ 'sub-accounts': Type.Array(Account) });
export const SubAccountAnswer = answer({ 'sub-account': Account });
export const LockStateAnswer = answer({ state: StringEnum(['locked', 'unlocked']) });
