import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { answer, Id, Nullable, WallTime } from '../http/response-schemas.ts';
import { type App, caller } from '../http/types.ts';
import type { TokensService } from './tokens.service.ts';

const TokenBody = Type.Object({
  token: Type.Object({
    name: Type.String(),
    ttl: Type.Optional(Type.Integer()),
    allowed_ips: Type.Optional(Type.Array(Type.String())),
  }),
});
const IdParams = Type.Object({ id: Type.String() });

const flag = Type.Integer({ enum: [0, 1] });
const TokenInfo = Type.Object({
  api_token_id: Id,
  name: Type.String(),
  created_at: WallTime,
  expired_at: Nullable({ ...WallTime }),
  ttl: Nullable(Type.Integer({ description: 'seconds' })),
  is_active: flag,
  allowed_ips: Type.Array(Type.String()),
  last_used_at: Nullable({ ...WallTime }),
});
const CreatedToken = {
  token: Type.String({ description: 'the secret, shown this once' }),
  token_id: Id,
  allowed_ips: Type.Array(Type.String()),
};

export function tokensRoutes(app: App, tokens: TokensService): void {
  app.post('/token', { schema: { body: TokenBody, response: answer(CreatedToken) } }, async (req) =>
    ok(await tokens.createToken(caller(req), req.body.token)),
  );
  app.post(
    '/token/account/:accountID',
    {
      schema: {
        body: TokenBody,
        params: Type.Object({ accountID: Type.String() }),
        response: answer(CreatedToken),
      },
    },
    async (req) => ok(await tokens.createToken(caller(req), req.body.token, req.params.accountID)),
  );
  app.get('/token', { schema: { response: answer({ tokens: Type.Array(TokenInfo) }) } }, async (req) =>
    ok({ tokens: await tokens.listTokens(caller(req)) }),
  );
  app.get(
    '/token/:id',
    { schema: { params: IdParams, response: answer({ token: TokenInfo }) } },
    async (req) => ok({ token: await tokens.getToken(caller(req), req.params.id) }),
  );
  app.delete(
    '/token/:id',
    { schema: { params: IdParams, response: answer({ deleted_token: Id }) } },
    async (req) => ok({ deleted_token: await tokens.deleteToken(caller(req), req.params.id) }),
  );
}
