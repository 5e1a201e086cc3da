// How the console's session routes are described in /openapi.json, and what they answer (console.routes.ts).
// They are outside the API's token authentication: the session cookie they set is the page's credential.
import Type from 'typebox';
import { Account } from '../accounts/accounts.schemas.ts';
import { answer, Nullable } from '../http/response-schemas.ts';

/** What the page knows of its session (SessionView in console.service.ts). */
const Session = Type.Object({
  csrf_token: Type.String({ description: 'sent back in `x-csrf-token` on every change the page makes' }),
  signed_in_account_id: Type.Integer(),
  user_id: Type.Integer({ description: 'the user who signed in' }),
  email: Type.String({ description: "that user's e-mail" }),
  role: Type.String({ description: "that user's role, read again on every request" }),
  permissions: Type.Array(Type.String(), {
    description: "that role's permissions (src/users/permissions.ts)",
  }),
  routes: Type.Array(Type.String(), {
    description:
      'every API route that role may call, as `METHOD /pattern` (`POST /send`): the page shows only these',
  }),
  account_id: Type.Integer({ description: 'the account whose view the session shows' }),
  parent_id: Nullable(Type.Integer()),
  account: Account,
  timezone: Type.String(),
  stop_mention: Type.String(),
  short_url_length: Type.Integer(),
  expires_at: Type.Integer({ description: 'epoch milliseconds' }),
});

const SessionAnswer = answer({ session: Session });
const common = { tags: ['console'], security: [] };

export const signInSchema = {
  ...common,
  summary:
    "Signs the web console in with a user's e-mail and password; sets the session cookie, or (two-factor on) answers code_needed with a pending token for POST /console/session/code",
  body: Type.Object({ email: Type.Unknown(), password: Type.Unknown() }),
  response: answer({
    session: Type.Optional(Session),
    code_needed: Type.Optional(Type.Boolean()),
    pending_token: Type.Optional(
      Type.String({ description: "the second step's credential, with the code; works once, for 5 minutes" }),
    ),
    pending_expires_at: Type.Optional(Type.Integer({ description: 'epoch milliseconds' })),
  }),
};
export const signInCodeSchema = {
  ...common,
  summary:
    "A two-factor sign-in's second step: the pending token and a TOTP code (or a recovery code); sets the session cookie",
  body: Type.Object({ pending_token: Type.Unknown(), code: Type.Unknown() }),
  response: SessionAnswer,
};
export const sessionSchema = {
  ...common,
  summary: "The console session's view (its cookie); -1 without one",
  response: SessionAnswer,
};
export const switchSchema = {
  ...common,
  summary:
    "Shows one direct sub-account's view (or, with null, the signed-in account's again); needs x-csrf-token",
  body: Type.Object({ account_id: Type.Unknown() }),
  response: SessionAnswer,
};
export const signOutSchema = {
  ...common,
  summary: 'Signs the console out and clears its cookie; needs x-csrf-token',
  response: answer({}),
};
