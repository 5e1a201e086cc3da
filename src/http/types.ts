import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { AuthContext } from '../shared/auth-context.ts';
import { ApiError } from '../shared/errors.ts';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | undefined;
  }
  interface FastifyContextConfig {
    /** The route also accepts the token as a `token` query parameter (GET /send). */
    queryToken?: boolean;
  }
}

/** The authenticated caller of an API route (the auth hook runs before every one). */
export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw ApiError.auth('not authenticated');
  return request.auth;
}
