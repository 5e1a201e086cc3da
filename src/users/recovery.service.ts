// A user's own recovery and second factor: a password change knowing the current one, a reset by e-mail
// (POST /users/forgot), TOTP two-factor (enrolment, the sign-in's code step, recovery codes, disabling), and
// the operator's clearing of it for a lost phone.
import type { AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { normalEmail } from '../shared/email-address.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Executor } from '../store/db.ts';
import { createOneTimeLinks, hashLink, type UserMailer } from './one-time-link.ts';
import { checkNewPassword } from './password-policy.ts';
import { recoveryCodesRepo } from './recovery-codes.repo.ts';
import {
  base32Decode,
  base32Encode,
  newRecoveryCodes,
  newTotpSecret,
  otpauthUri,
  recoveryCodeHash,
  verifyTotp,
} from './totp.ts';
import { type UserRow, usersRepo } from './users.repo.ts';
import { roleOf, type UserAccounts, type UserPasswords, type UserSessions } from './users.service.ts';

export type RecoveryService = ReturnType<typeof createRecoveryService>;

/** Wrong codes a pending sign-in takes before it closes (the password is asked again). */
export const maxCodeFailures = 5;

/** The one answer of POST /users/forgot, whoever the e-mail is. */
export const forgotAnswer =
  'if this e-mail address is a user\u2019s, a link to set a new password was sent to it; it works once, for a short time';

export function createRecoveryService(deps: {
  db: Executor;
  clock: Clock;
  timezone: string;
  passwords: UserPasswords;
  accounts: UserAccounts;
  sessions: UserSessions;
  mailer: UserMailer | undefined;
  consoleUrl: string;
  /** How long a reset's link works (RESET_LINK_MINUTES). */
  resetLinkTtlMs: number;
  /** The issuer an authenticator app shows beside the user's e-mail. */
  issuer: string;
  /** A reset whose e-mail could not go out is logged here: nobody waits for it. */
  log: { warn(object: object, message: string): void };
  /** The audit log: each change of a user's password or two-factor, in its transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, passwords } = deps;
  const { wallTime } = zonedTime(deps.timezone);
  const links = createOneTimeLinks({ clock, mailer: deps.mailer, consoleUrl: deps.consoleUrl, wallTime });

  /** The console user behind the caller, or -1: a token has no profile. */
  async function me(auth: AuthContext): Promise<UserRow> {
    const user = auth.userId === undefined ? undefined : await usersRepo.find(db, auth.userId);
    if (!user) throw ApiError.auth('only a user signed in to the console has a profile: not an API token');
    return user;
  }

  async function checkPassword(user: UserRow, password: unknown, field: string): Promise<void> {
    const ok =
      typeof password === 'string' &&
      password !== '' &&
      (await passwords.check(user.email, password, user.password_hash ?? undefined));
    if (!ok) throw ApiError.auth(`${field} is not this user's password`);
  }

  const secretOf = (base32: string) => base32Decode(base32) ?? Buffer.alloc(0);

  /**
   * A second factor: a TOTP code after the last one accepted, or an unused recovery code (used up by this),
   * each once. `accept` records a TOTP code's step (in the same conditional write as whatever else it closes).
   */
  async function checkCode(
    ex: Executor,
    user: UserRow,
    rawCode: unknown,
    accept: (step: number | null) => Promise<boolean>,
  ): Promise<void> {
    const code = typeof rawCode === 'string' ? rawCode.trim() : '';
    if (code === '') throw ApiError.data('code is required: six digits from the app, or a recovery code');
    if (user.totp_secret === null) throw ApiError.data('two-factor is not on for this user');
    if (/^\d[\d\s]*$/.test(code)) {
      const last = user.totp_last_step === null ? null : Number(user.totp_last_step);
      const step = verifyTotp(secretOf(user.totp_secret), code, clock.now(), last);
      if (step === undefined) throw ApiError.auth('wrong or already used two-factor code');
      if (!(await accept(step))) throw ApiError.auth('wrong or already used two-factor code');
      return;
    }
    const used = await recoveryCodesRepo.use(ex, Number(user.id), recoveryCodeHash(code), clock.now());
    if (!used) throw ApiError.auth('wrong or already used recovery code');
    if (!(await accept(null))) throw ApiError.auth('this sign-in step was already completed: sign in again');
  }

  /**
   * A change of one's own two-factor: the caller's password, then in `change`'s transaction a code (or a
   * recovery code), each used once.
   */
  async function withPasswordAndCode(
    auth: AuthContext,
    input: { password?: unknown; code?: unknown },
    change: (tx: Executor, user: UserRow) => Promise<void>,
  ): Promise<void> {
    const user = await me(auth);
    if (user.totp_secret === null) throw ApiError.data('two-factor is not on for this user');
    await checkPassword(user, input.password, 'user.password');
    await db.transaction().execute(async (tx) => {
      await checkCode(tx, user, input.code, async (step) =>
        step === null ? true : usersRepo.acceptStep(tx, Number(user.id), step),
      );
      await change(tx, user);
    });
  }

  /** A user's own change, in `tx`: its entry on the user's account, the user acting (`auth` absent: the CLI). */
  const ownEntry = (user: UserRow, action: string, auth?: AuthContext) => ({
    accountId: Number(user.account_id),
    auth,
    action,
    objectType: 'user',
    objectId: Number(user.id),
  });

  async function sendReset(user: UserRow, email: string): Promise<void> {
    const userId = Number(user.id);
    try {
      const link = await db.transaction().execute(async (tx) => {
        const opened = await links.open(tx, userId, deps.resetLinkTtlMs);
        // Asked by whoever knew the e-mail: no one signed in.
        await deps.audit.record(tx, {
          ...ownEntry(user, 'user.reset_requested'),
          actor: { kind: 'user', id: null, label: email, ip: null },
        });
        return opened;
      });
      await links.mail(email, link, 'reset');
    } catch (error) {
      deps.log.warn({ err: error, userId }, 'the password reset e-mail could not be sent');
    }
  }

  return {
    /**
     * POST /users/forgot: the same answer, after the same work (one read by e-mail), whether the e-mail is a
     * user's or not; the link is opened and e-mailed after the answer is on its way, so neither the answer nor
     * its time says whether anyone was found. A crash before the e-mail goes loses it: the person asks again
     * (a durable queue would have to keep the link's token in clear, which the database never holds).
     */
    async forgot(input: { email?: unknown }): Promise<string> {
      if (!deps.mailer) throw ApiError.data('SMTP_URL is not set: ask the operator to reset your password');
      const email = typeof input.email === 'string' ? normalEmail(input.email) : undefined;
      if (email === undefined) throw ApiError.data('user.email must be an e-mail address');
      const user = await usersRepo.findByEmail(db, email);
      if (user) setImmediate(() => void sendReset(user, email));
      return forgotAnswer;
    },

    /** PUT /users/me/password: the current password, then a new one; the user's other sessions end. */
    async changePassword(auth: AuthContext, input: { current?: unknown; password?: unknown }) {
      const user = await me(auth);
      await checkPassword(user, input.current, 'user.current');
      const password = checkNewPassword(input.password, user.email);
      const hash = await passwords.hash(password);
      await db.transaction().execute(async (tx) => {
        await usersRepo.setPassword(tx, Number(user.id), hash);
        await deps.audit.record(tx, ownEntry(user, 'user.change_password', auth));
      });
      await deps.sessions.endAll(Number(user.id), auth.sessionId);
    },

    /** GET /users/me: who the caller is, and whether two-factor is on. */
    async profile(auth: AuthContext) {
      const user = await me(auth);
      const on = user.totp_secret !== null;
      return {
        id: String(user.id),
        email: user.email,
        role: user.role,
        two_factor: on,
        recovery_codes_left: on ? await recoveryCodesRepo.unused(db, Number(user.id)) : 0,
      };
    },

    /** POST /users/me/two-factor: a new secret, shown once, until a first code confirms it. */
    async enroll(auth: AuthContext) {
      const user = await me(auth);
      if (user.totp_secret !== null) throw ApiError.data('two-factor is already on: disable it first');
      const secret = newTotpSecret();
      await db.transaction().execute(async (tx) => {
        await usersRepo.setPendingSecret(tx, Number(user.id), base32Encode(secret));
        await deps.audit.record(tx, ownEntry(user, 'user.two_factor_enrol', auth));
      });
      return {
        secret: base32Encode(secret),
        otpauth_uri: otpauthUri({ issuer: deps.issuer, account: user.email, secret }),
      };
    },

    /** PUT /users/me/two-factor: a first code turns it on; ten recovery codes, shown once (hashes kept). */
    async confirm(auth: AuthContext, input: { code?: unknown }) {
      const user = await me(auth);
      const pending = user.totp_pending_secret;
      if (pending === null)
        throw ApiError.data('no two-factor enrolment is open: POST /users/me/two-factor first');
      const code = typeof input.code === 'string' ? input.code : '';
      const step = verifyTotp(secretOf(pending), code, clock.now());
      if (step === undefined)
        throw ApiError.data('user.code does not match the secret: check the app and the clock');
      const codes = newRecoveryCodes();
      await db.transaction().execute(async (tx) => {
        if (!(await usersRepo.confirmSecret(tx, Number(user.id), pending, step))) {
          throw ApiError.data('the enrolment changed meanwhile: start again');
        }
        await recoveryCodesRepo.replace(tx, Number(user.id), codes.map(recoveryCodeHash));
        await deps.audit.record(tx, ownEntry(user, 'user.two_factor_on', auth));
      });
      return { recovery_codes: codes };
    },

    /**
     * POST /users/me/two-factor/recovery-codes: the password and a code (or a recovery code) give ten new
     * recovery codes, shown once; the old ones stop working.
     */
    async renewRecoveryCodes(auth: AuthContext, input: { password?: unknown; code?: unknown }) {
      const codes = newRecoveryCodes();
      await withPasswordAndCode(auth, input, async (tx, user) => {
        await recoveryCodesRepo.replace(tx, Number(user.id), codes.map(recoveryCodeHash));
        await deps.audit.record(tx, ownEntry(user, 'user.recovery_codes_renew', auth));
      });
      return { recovery_codes: codes };
    },

    /** DELETE /users/me/two-factor: the password and a code (or a recovery code) turn it off. */
    async disable(auth: AuthContext, input: { password?: unknown; code?: unknown }) {
      await withPasswordAndCode(auth, input, async (tx, user) => {
        await usersRepo.clearTwoFactor(tx, Number(user.id));
        await recoveryCodesRepo.deleteAll(tx, Number(user.id));
        await deps.audit.record(tx, ownEntry(user, 'user.two_factor_off', auth));
      });
    },

    /**
     * POST /console/session/code: a pending sign-in's token and a code; the caller the session opens as. The
     * step closes with the code, once: a second use of either is -1.
     */
    async completeSignIn(rawToken: unknown, code: unknown): Promise<AuthContext> {
      const token = typeof rawToken === 'string' ? rawToken : '';
      const hash = hashLink(token);
      const user = await usersRepo.findBySignIn(db, hash, clock.now());
      if (!user) throw ApiError.auth('this sign-in step is unknown or has expired: sign in again');
      const id = Number(user.id);
      try {
        await db
          .transaction()
          .execute((tx) => checkCode(tx, user, code, (step) => usersRepo.closeSignIn(tx, id, hash, step)));
      } catch (error) {
        // Besides the brake per address, a pending sign-in takes a few wrong codes only: then the password
        // is asked again, so guessing codes from many addresses costs a right password each few tries.
        if (error instanceof ApiError && error.status === Status.auth) {
          await usersRepo.failSignIn(db, id, hash, maxCodeFailures);
        }
        throw error;
      }
      const auth = await deps.accounts.signInAs(Number(user.account_id));
      return { ...auth, userId: id, role: roleOf(user.role, 'role') };
    },

    /** `pigeon user reset-password USER_ID --clear-2fa`: two-factor off, for a lost phone. */
    async operatorClearTwoFactor(userId: number): Promise<void> {
      const user = await usersRepo.find(db, userId);
      if (!user) throw ApiError.notFound(`user ${userId} does not exist`);
      await db.transaction().execute(async (tx) => {
        await usersRepo.clearTwoFactor(tx, userId);
        await recoveryCodesRepo.deleteAll(tx, userId);
        await deps.audit.record(tx, ownEntry(user, 'user.two_factor_clear'));
      });
    },
  };
}
