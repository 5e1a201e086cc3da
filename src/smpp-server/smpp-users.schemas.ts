// What the SMPP users' routes answer (smpp-users.routes.ts); `SmppUserView` is the SMPP users service's answer
// and the console's. Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, WallTime } from '../http/response-schemas.ts';

/** An SMPP user as the API shows it: never its password. */
export const SmppUser = Type.Object({
  system_id: Type.String(),
  account_id: Type.String({ pattern: '^[0-9]+$' }),
  tps: Type.Integer({ description: 'submit_sm per second across its binds; 0 for no limit' }),
  max_binds: Type.Integer(),
  allowed_ips: Type.Array(Type.String()),
  created_at: WallTime,
});
export type SmppUserView = Static<typeof SmppUser>;

export const SmppUserAnswer = answer({ smpp_user: SmppUser });
export const SmppUsersAnswer = answer({ smpp_users: Type.Array(SmppUser) });
export const DeletedSmppUserAnswer = answer({ deleted_smpp_user: Type.String() });
