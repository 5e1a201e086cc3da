// What the users' routes take and answer (users.routes.ts). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Id, WallTime } from '../http/response-schemas.ts';

/** A user as the users' routes show it: never its password or link. */
export const User = Type.Object({
  id: Id,
  email: Type.String(),
  role: Type.String({ description: 'owner, admin, sender, developer or viewer' }),
  state: Type.String({ description: 'invited (no password set yet) or active' }),
  created_at: WallTime,
});
export type UserView = Static<typeof User>;

export const UsersAnswer = answer({ users: Type.Array(User) });
export const UserAnswer = answer({ user: User });
export const InvitedAnswer = answer({
  user: Type.Object({
    ...User.properties,
    invitation_expires_at: { ...WallTime, description: 'when the e-mailed link stops working' },
  }),
});
export const DeletedUserAnswer = answer({ deleted_user: Id });

// Fields are checked by the service, which names a wrong one in its -7.
export const InviteBody = Type.Object({
  user: Type.Object({ email: Type.Unknown(), role: Type.Unknown() }),
});
export const RoleBody = Type.Object({ user: Type.Object({ role: Type.Unknown() }) });
export const AcceptBody = Type.Object({
  user: Type.Object({ token: Type.Unknown(), password: Type.Unknown() }),
});
