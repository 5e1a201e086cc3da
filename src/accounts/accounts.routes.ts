import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import type { AccountsService } from './accounts.service.ts';

const TokenBody = Type.Object({
  token: Type.Object({
    name: Type.String(),
    ttl: Type.Optional(Type.Integer()),
    allowed_ips: Type.Optional(Type.Array(Type.String())),
  }),
});
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

const TransferBody = Type.Object({
  transfer: Type.Object({ to_account: Type.String(), credits: Type.String() }),
});

const NotificationBody = Type.Object({
  notification: Type.Object({
    alert_trigger: Type.Optional(Type.String()),
    alert_email: Type.Optional(Type.String()),
    alert_gsm: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    phone_number: Type.Optional(Type.String()),
  }),
});

export function accountsRoutes(app: App, accounts: AccountsService): void {
  app.get('/credits', async (req) => ok(await accounts.creditsView(caller(req))));

  app.get('/account', async (req) => ok({ account: await accounts.account(caller(req)) }));
  app.post('/account', { schema: { body: AccountBody } }, async (req) =>
    ok(await accounts.createSubAccount(caller(req), req.body.account)),
  );
  app.get('/sub-accounts', async (req) => ok({ 'sub-accounts': await accounts.subAccounts(caller(req)) }));
  app.get('/sub-accounts/:id', { schema: { params: IdParams } }, async (req) =>
    ok({ 'sub-account': await accounts.subAccount(caller(req), req.params.id) }),
  );
  app.get('/account/:id/lock', { schema: { params: IdParams } }, async (req) =>
    ok(await accounts.lock(caller(req), req.params.id)),
  );
  app.get('/account/:id/unlock', { schema: { params: IdParams } }, async (req) =>
    ok(await accounts.unlock(caller(req), req.params.id)),
  );
  app.post('/account/transfer', { schema: { body: TransferBody } }, async (req) =>
    ok(await accounts.transfer(caller(req), req.body.transfer)),
  );

  app.post('/token', { schema: { body: TokenBody } }, async (req) =>
    ok(await accounts.createToken(caller(req), req.body.token)),
  );
  app.post(
    '/token/account/:accountID',
    { schema: { body: TokenBody, params: Type.Object({ accountID: Type.String() }) } },
    async (req) => ok(await accounts.createToken(caller(req), req.body.token, req.params.accountID)),
  );
  app.get('/token', async (req) => ok({ tokens: await accounts.listTokens(caller(req)) }));
  app.get('/token/:id', { schema: { params: IdParams } }, async (req) =>
    ok({ token: await accounts.getToken(caller(req), req.params.id) }),
  );
  app.delete('/token/:id', { schema: { params: IdParams } }, async (req) =>
    ok({ deleted_token: await accounts.deleteToken(caller(req), req.params.id) }),
  );

  app.get('/notification/balance', async (req) =>
    ok({ notification: await accounts.getNotification(caller(req)) }),
  );
  app.put('/notification/balance', { schema: { body: NotificationBody } }, async (req) =>
    ok({ notification: await accounts.putNotification(caller(req), req.body.notification) }),
  );
}
