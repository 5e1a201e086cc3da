import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Id, Nullable } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import type { AccountsService } from './accounts.service.ts';

const IdParams = Type.Object({ id: Type.String() });

// Numbers and flags are read as strings (XML gives strings; JSON numbers are coerced): the service checks
// them and names the field in its -7.
const optionalText = Type.Optional(Type.String());
const AccountBody = Type.Object({
  account: Type.Object({
    email: Type.String(),
    password: Type.String(),
    firstname: optionalText,
    lastname: optionalText,
    company: optionalText,
    type: optionalText,
    phone: optionalText,
    address1: optionalText,
    address2: optionalText,
    zip: optionalText,
    city: optionalText,
    country_code: optionalText,
    sender: optionalText,
    description: optionalText,
    isChild: optionalText,
    unlimited: optionalText,
  }),
});

const flag = Type.Integer({ enum: [0, 1] });
const Account = Type.Object({
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
  unlimited: flag,
  description: Type.String(),
  senderid: Nullable(Type.String()),
  status: Type.Integer(),
  state: Type.String({ enum: ['active', 'locked'], description: '"locked" while its parent has locked it' }),
  sender: Type.String(),
});
const LockState = answer({ state: Type.String({ enum: ['locked', 'unlocked'] }) });

export function accountsRoutes(app: App, accounts: AccountsService): void {
  app.get('/account', { schema: { response: answer({ account: Account }) } }, async (req) =>
    ok({ account: await accounts.account(caller(req)) }),
  );
  app.post(
    '/account',
    { schema: { body: AccountBody, response: answer({ id: Id, active: flag }) } },
    async (req) => ok(await accounts.createSubAccount(caller(req), req.body.account)),
  );
  app.get(
    '/sub-accounts',
    { schema: { response: answer({ 'sub-accounts': Type.Array(Account) }) } },
    async (req) => ok({ 'sub-accounts': await accounts.subAccounts(caller(req)) }),
  );
  app.get(
    '/sub-accounts/:id',
    { schema: { params: IdParams, response: answer({ 'sub-account': Account }) } },
    async (req) => ok({ 'sub-account': await accounts.subAccount(caller(req), req.params.id) }),
  );
  app.get('/account/:id/lock', { schema: { params: IdParams, response: LockState } }, async (req) =>
    ok(await accounts.lock(caller(req), req.params.id)),
  );
  app.get('/account/:id/unlock', { schema: { params: IdParams, response: LockState } }, async (req) =>
    ok(await accounts.unlock(caller(req), req.params.id)),
  );
}
