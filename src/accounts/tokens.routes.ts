import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { CreatedTokenAnswer, DeletedTokenAnswer, TokenAnswer, TokensAnswer } from './tokens.schemas.ts';
import type { TokensService } from './tokens.service.ts';

const TokenBody = Type.Object({
  token: Type.Object({
    name: Type.String(),
    ttl: Type.Optional(Type.Integer()),
    allowed_ips: Type.Optional(Type.Array(Type.String())),
    // Checked by the service, which names a wrong value in its -7.
    scope: Type.Optional(Type.Unknown()),
  }),
});
const IdParams = Type.Object({ id: Type.String() });

export function tokensRoutes(app: App, tokens: TokensService): void {
  app.post('/token', { schema: { body: TokenBody, response: CreatedTokenAnswer } }, async (req) =>
    ok(await tokens.createToken(caller(req), req.body.token)),
  );
  app.post(
    '/token/account/:accountID',
    {
      schema: {
        body: TokenBody,
        params: Type.Object({ accountID: Type.String() }),
        response: CreatedTokenAnswer,
      },
    },
    async (req) => ok(await tokens.createToken(caller(req), req.body.token, req.params.accountID)),
  );
  app.get('/token', { schema: { response: TokensAnswer } }, async (req) =>
    ok({ tokens: await tokens.listTokens(caller(req)) }),
  );
  app.get('/token/:id', { schema: { params: IdParams, response: TokenAnswer } }, async (req) =>
    ok({ token: await tokens.getToken(caller(req), req.params.id) }),
  );
  app.delete('/token/:id', { schema: { params: IdParams, response: DeletedTokenAnswer } }, async (req) =>
    ok({ deleted_token: await tokens.deleteToken(caller(req), req.params.id) }),
  );
}
