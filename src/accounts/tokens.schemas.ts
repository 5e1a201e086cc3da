// What the tokens' routes answer (tokens.routes.ts); the view types are the tokens service's answers and the
// console's. Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Flag, Id, Nullable, WallTime } from '../http/response-schemas.ts';

/** A token as GET /token and GET /token/:id show it: never its secret. */
export const TokenInfo = Type.Object({
  api_token_id: Id,
  name: Type.String(),
  created_at: WallTime,
  expired_at: Nullable({ ...WallTime }),
  ttl: Nullable(Type.Integer({ description: 'seconds' })),
  is_active: Flag,
  allowed_ips: Type.Array(Type.String()),
  last_used_at: Nullable({ ...WallTime }),
  scope: Type.String({ description: 'full (every right), send (sends, cancels and reads) or read' }),
});
export type TokenInfoView = Static<typeof TokenInfo>;

const createdToken = {
  token: Type.String({ description: 'the secret, shown this once' }),
  token_id: Id,
  allowed_ips: Type.Array(Type.String()),
  scope: Type.String({ description: 'full (every right), send (sends, cancels and reads) or read' }),
};
export const CreatedToken = Type.Object(createdToken);
export type CreatedTokenView = Static<typeof CreatedToken>;

export const CreatedTokenAnswer = answer(createdToken);
export const TokensAnswer = answer({ tokens: Type.Array(TokenInfo) });
export const TokenAnswer = answer({ token: TokenInfo });
export const DeletedTokenAnswer = answer({ deleted_token: Id });
