import { ok } from '../http/envelope.ts';
import { type App, caller } from '../http/types.ts';
import type { RecoveryService } from './recovery.service.ts';
import {
  CodeBody,
  DisableBody,
  EmptyAnswer,
  EnrolAnswer,
  ForgotAnswer,
  ForgotBody,
  PasswordBody,
  ProfileAnswer,
  RecoveryCodesAnswer,
} from './users.schemas.ts';

/**
 * A console user's own profile (permission `profile`, every role): its password and two-factor. A wrong
 * password or code counts toward the brake on failed sign-ins of the client's address.
 */
export function profileRoutes(app: App, recovery: RecoveryService): void {
  app.get('/users/me', { schema: { response: ProfileAnswer } }, async (req) =>
    ok({ user: await recovery.profile(caller(req)) }),
  );
  app.put('/users/me/password', { schema: { body: PasswordBody, response: EmptyAnswer } }, async (req) => {
    await app.rateLimits.attempt(req, () => recovery.changePassword(caller(req), req.body.user));
    return ok({});
  });
  app.post('/users/me/two-factor', { schema: { response: EnrolAnswer } }, async (req) =>
    ok({ two_factor: await recovery.enroll(caller(req)) }),
  );
  app.put(
    '/users/me/two-factor',
    { schema: { body: CodeBody, response: RecoveryCodesAnswer } },
    async (req) =>
      ok({ recovery_codes: (await recovery.confirm(caller(req), req.body.user)).recovery_codes }),
  );
  app.post(
    '/users/me/two-factor/recovery-codes',
    { schema: { body: DisableBody, response: RecoveryCodesAnswer } },
    async (req) =>
      ok({
        recovery_codes: (
          await app.rateLimits.attempt(req, () => recovery.renewRecoveryCodes(caller(req), req.body.user))
        ).recovery_codes,
      }),
  );
  app.delete(
    '/users/me/two-factor',
    { schema: { body: DisableBody, response: EmptyAnswer } },
    async (req) => {
      await app.rateLimits.attempt(req, () => recovery.disable(caller(req), req.body?.user ?? {}));
      return ok({});
    },
  );
}

/**
 * POST /users/forgot, outside authentication: every request counts toward the brake of its address (found
 * or not, so the brake says nothing either), which bounds the e-mails one address can have sent.
 */
export function forgotRoutes(app: App, recovery: RecoveryService): void {
  app.post(
    '/users/forgot',
    { schema: { body: ForgotBody, response: ForgotAnswer, security: [] } },
    async (req) =>
      ok({
        message: await app.rateLimits.attempt(req, () => recovery.forgot(req.body.user), {
          countEvery: true,
        }),
      }),
  );
}
