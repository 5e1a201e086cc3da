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

// A user's own profile (profile.routes.ts): fields checked by the recovery service.
export const ForgotBody = Type.Object({ user: Type.Object({ email: Type.Unknown() }) });
export const ForgotAnswer = answer({ message: Type.String() });
export const PasswordBody = Type.Object({
  user: Type.Object({ current: Type.Unknown(), password: Type.Unknown() }),
});
export const ProfileAnswer = answer({
  user: Type.Object({
    id: Id,
    email: Type.String(),
    role: Type.String(),
    two_factor: Type.Boolean({ description: 'whether sign-in needs a TOTP code after the password' }),
    recovery_codes_left: Type.Integer(),
  }),
});
export const EnrolAnswer = answer({
  two_factor: Type.Object({
    secret: Type.String({ description: 'base32, for an app that takes it typed; shown this once' }),
    otpauth_uri: Type.String({ description: 'otpauth://totp/… for an app that reads a link or QR code' }),
  }),
});
export const CodeBody = Type.Object({ user: Type.Object({ code: Type.Unknown() }) });
export const RecoveryCodesAnswer = answer({
  recovery_codes: Type.Array(Type.String(), { description: 'ten codes, each usable once; shown this once' }),
});
export const DisableBody = Type.Object({
  user: Type.Object({ password: Type.Unknown(), code: Type.Unknown() }),
});
export const EmptyAnswer = answer({});
