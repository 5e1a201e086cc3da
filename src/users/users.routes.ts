import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import {
  AcceptBody,
  DeletedUserAnswer,
  InviteBody,
  InvitedAnswer,
  RoleBody,
  UserAnswer,
  UsersAnswer,
} from './users.schemas.ts';
import type { UsersService } from './users.service.ts';

const IdParams = Type.Object({ id: Type.String() });

/** The owner's users API (permission `users`, src/users/permissions.ts). */
export function usersRoutes(app: App, users: UsersService): void {
  app.get('/users', { schema: { response: UsersAnswer } }, async (req) =>
    ok({ users: await users.list(caller(req)) }),
  );
  app.post('/users', { schema: { body: InviteBody, response: InvitedAnswer } }, async (req) =>
    ok({ user: await users.invite(caller(req), req.body.user) }),
  );
  app.put('/users/:id', { schema: { params: IdParams, body: RoleBody, response: UserAnswer } }, async (req) =>
    ok({ user: await users.changeRole(caller(req), req.params.id, req.body.user) }),
  );
  app.delete('/users/:id', { schema: { params: IdParams, response: DeletedUserAnswer } }, async (req) =>
    ok({ deleted_user: await users.remove(caller(req), req.params.id) }),
  );
}

/** An invitation's (or reset's) link sets the password: outside authentication, its token is the credential. */
export function userLinkRoutes(app: App, users: UsersService): void {
  app.post(
    '/users/accept',
    { schema: { body: AcceptBody, response: UserAnswer, security: [] } },
    async (req) => ok({ user: await users.accept(req.body.user, req.ip) }),
  );
}
