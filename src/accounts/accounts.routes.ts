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
  app.get('/credits', async (req) => ok({ credits: await accounts.credits(caller(req).accountId) }));

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
