import Type from 'typebox';
import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import { DeletedSmppUserAnswer, SmppUserAnswer, SmppUsersAnswer } from './smpp-users.schemas.ts';
import type { SmppUsersService } from './smpp-users.service.ts';

const SmppUserBody = Type.Object({
  smpp_user: Type.Object({
    system_id: Type.String(),
    password: Type.String(),
    tps: Type.Optional(Type.Integer()),
    max_binds: Type.Optional(Type.Integer()),
    allowed_ips: Type.Optional(Type.Array(Type.String())),
  }),
});

/** The account's SMPP users: the credentials its SMPP clients bind with (SMPP_SERVER_PORT). */
export function smppUsersRoutes(app: App, smppUsers: SmppUsersService): void {
  app.get('/smpp/user', { schema: { response: SmppUsersAnswer } }, async (req) =>
    ok({ smpp_users: await smppUsers.listOwn(caller(req)) }),
  );
  app.post('/smpp/user', { schema: { body: SmppUserBody, response: SmppUserAnswer } }, async (req) =>
    ok({ smpp_user: await smppUsers.create(caller(req), req.body.smpp_user) }),
  );
  app.delete(
    '/smpp/user/:system_id',
    { schema: { params: Type.Object({ system_id: Type.String() }), response: DeletedSmppUserAnswer } },
    async (req) => ok({ deleted_smpp_user: await smppUsers.delete(caller(req), req.params.system_id) }),
  );
}
