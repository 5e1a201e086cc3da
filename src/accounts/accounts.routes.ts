import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import {
  AccountAnswer,
  CreatedSubAccountAnswer,
  LockStateAnswer,
  SubAccountAnswer,
  SubAccountsAnswer,
} from './accounts.schemas.ts';
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

export function accountsRoutes(app: App, accounts: AccountsService): void {
  app.get('/account', { schema: { response: AccountAnswer } }, async (req) =>
    ok({ account: await accounts.account(caller(req)) }),
  );
  app.post('/account', { schema: { body: AccountBody, response: CreatedSubAccountAnswer } }, async (req) =>
    ok(await accounts.createSubAccount(caller(req), req.body.account)),
  );
  app.get('/sub-accounts', { schema: { response: SubAccountsAnswer } }, async (req) =>
    ok({ 'sub-accounts': await accounts.subAccounts(caller(req)) }),
  );
  app.get('/sub-accounts/:id', { schema: { params: IdParams, response: SubAccountAnswer } }, async (req) =>
    ok({ 'sub-account': await accounts.subAccount(caller(req), req.params.id) }),
  );
  app.get('/account/:id/lock', { schema: { params: IdParams, response: LockStateAnswer } }, async (req) =>
    ok(await accounts.lock(caller(req), req.params.id)),
  );
  app.get('/account/:id/unlock', { schema: { params: IdParams, response: LockStateAnswer } }, async (req) =>
    ok(await accounts.unlock(caller(req), req.params.id)),
  );
}
