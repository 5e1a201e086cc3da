// Users of an account: their sign-in (the console's), roles, invitations and one-time links, the owner's API
// (GET/POST/PUT/DELETE /users, POST /users/accept) and the operator's commands (`pigeon user …`).
import { randomBytes } from 'node:crypto';
import { type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import { type AuthContext, type Role, roles } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { normalEmail } from '../shared/email-address.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { DialectName, Executor } from '../store/db.ts';
import { createOneTimeLinks, hashLink, type OneTimeLink, type UserMailer } from './one-time-link.ts';
import { checkNewPassword } from './password-policy.ts';
import { type UserRow, usersRepo } from './users.repo.ts';
import type { UserView } from './users.schemas.ts';

/** What the users service needs of passwords: accounts' scrypt, and the brake on wrong ones. */
export interface UserPasswords {
  hash(password: string): Promise<string>;
  /** Whether `password` matches `storedHash` (undefined: no such user, the same work done); -1 when braked. */
  check(email: string, password: string, storedHash: string | undefined): Promise<boolean>;
}

/** What the users service asks of accounts, through their service. */
export interface UserAccounts {
  /** The caller signing in as the account: -1 when it is locked or gone. */
  signInAs(accountId: number): Promise<AuthContext>;
  exists(accountId: number): Promise<boolean>;
}

/** What the users service asks of the console's sessions, through its service. */
export interface UserSessions {
  /** Ends every console session of the user (but `exceptSessionId`'s): they answer -1 from the next request. */
  endAll(userId: number, exceptSessionId?: number): Promise<void>;
}

/** A sign-in whose password was right, waiting for a two-factor code (POST /console/session/code). */
export interface PendingSignIn {
  code_needed: true;
  pending_token: string;
  expires_at: number;
}

export type UsersService = ReturnType<typeof createUsersService>;

/** A role by its name, or -7 naming the field. */
export function roleOf(value: unknown, field = 'user.role'): Role {
  const role = roles.find((r) => r === value);
  if (role === undefined) throw ApiError.data(`${field} must be one of ${roles.join(', ')}`);
  return role;
}

const signInStepMs = 5 * 60_000;

export function createUsersService(deps: {
  db: Executor;
  dialect: DialectName;
  clock: Clock;
  timezone: string;
  passwords: UserPasswords;
  accounts: UserAccounts;
  mailer: UserMailer | undefined;
  /** The console's public address (CONSOLE_URL): links point to `<it>/accept?token=…`. */
  consoleUrl: string;
  /** How long an invitation's link works. */
  linkTtlMs: number;
  /** The audit log: each change of a user, in its transaction (`auth` absent: the operator's CLI). */
  audit: AuditTrail;
  sessions: UserSessions;
}) {
  const { db, clock, passwords, accounts } = deps;
  const { wallTime } = zonedTime(deps.timezone);
  const links = createOneTimeLinks({ clock, mailer: deps.mailer, consoleUrl: deps.consoleUrl, wallTime });

  const view = (row: Pick<UserRow, 'id' | 'email' | 'role' | 'password_hash' | 'created_at'>): UserView => ({
    id: idOut(row.id),
    email: row.email,
    role: row.role,
    // invited: no password yet (its link may have expired: the operator's reset opens a new one).
    state: row.password_hash === null ? 'invited' : 'active',
    created_at: wallTime(Number(row.created_at)),
  });

  function emailOf(value: unknown): string {
    const email = typeof value === 'string' ? normalEmail(value) : undefined;
    if (email === undefined)
      throw ApiError.data(`user.email ${JSON.stringify(value)} is not an e-mail address`);
    return email;
  }

  const emailTaken = (email: string) => ApiError.data(`user.email ${email} is already a user's`);
  const noSuchUser = (raw: unknown) => ApiError.notFound(`user "${String(raw)}" not found`);

  /** A user of any account, or -5. */
  async function anyUser(userId: number): Promise<UserRow> {
    const row = await usersRepo.find(db, userId);
    if (!row) throw ApiError.notFound(`user ${userId} does not exist`);
    return row;
  }

  /**
   * Changes one user of the account (its role, or its removal with `role` null) in a transaction that locks
   * the account's users: an account always keeps an owner.
   */
  async function change(
    auth: AuthContext | undefined,
    accountId: number,
    userId: number,
    raw: unknown,
    role: Role | null,
  ): Promise<void> {
    await db.transaction().execute(async (tx) => {
      const users = await usersRepo.rolesForUpdate(tx, deps.dialect, accountId);
      const target = users.find((u) => Number(u.id) === userId);
      if (!target) throw noSuchUser(raw);
      const ownersLeft = users.filter((u) => u.role === 'owner' && Number(u.id) !== userId).length;
      if (target.role === 'owner' && role !== 'owner' && ownersLeft === 0) {
        throw ApiError.data(
          `user ${userId} is the account's last owner: make another user owner before ${role === null ? 'removing' : 'demoting'} it`,
        );
      }
      if (role === null) await usersRepo.delete(tx, accountId, userId);
      else await usersRepo.setRole(tx, accountId, userId, role);
      await deps.audit.record(tx, {
        accountId,
        auth,
        action: role === null ? 'user.remove' : 'user.change_role',
        objectType: 'user',
        objectId: userId,
      });
    });
    // A removed user's sessions go at once (they would answer -1 anyway: the user is read on every request).
    if (role === null) await deps.sessions.endAll(userId);
  }

  /** Creates an invited user (no password) with a link; e-mails it when there is a mailer. */
  async function invite(
    auth: AuthContext | undefined,
    accountId: number,
    rawEmail: unknown,
    rawRole: unknown,
    mail: 'always' | 'if-set',
  ) {
    const email = emailOf(rawEmail);
    const role = roleOf(rawRole);
    if (mail === 'always' && !deps.mailer) {
      throw ApiError.data(
        'SMTP_URL is not set: the invitation cannot be e-mailed (the operator can run `pigeon user add`, which prints the link)',
      );
    }
    let created: { id: number; link: OneTimeLink };
    try {
      created = await db.transaction().execute(async (tx) => {
        if (await usersRepo.findByEmail(tx, email)) throw emailTaken(email);
        const id = await usersRepo.insert(tx, {
          account_id: accountId,
          email,
          password_hash: null,
          role,
          created_at: clock.now(),
        });
        await deps.audit.record(tx, {
          accountId,
          auth,
          action: 'user.invite',
          objectType: 'user',
          objectId: id,
        });
        return { id, link: await links.open(tx, id, deps.linkTtlMs) };
      });
    } catch (error) {
      // Two invitations of one e-mail at once: the loser meets the unique index.
      if (!(error instanceof ApiError) && (await usersRepo.findByEmail(db, email))) throw emailTaken(email);
      throw error;
    }
    let emailed = false;
    if (deps.mailer) {
      try {
        await links.mail(email, created.link, { invitedTo: accountId });
        emailed = true;
      } catch (error) {
        if (mail === 'always') {
          // Nobody received the link: the invitation is taken back, and can be made again.
          await usersRepo.delete(db, accountId, created.id);
          throw new ApiError(
            Status.unknown,
            `the invitation e-mail could not be sent (${(error as Error).message}): nothing was created`,
          );
        }
      }
    }
    return { user: view(await anyUser(created.id)), ...created.link, emailed };
  }

  return {
    /**
     * An account's first user, its owner, in the account's creation transaction, with the account's e-mail
     * and password hash (its console sign-in). -7 when a user already has that e-mail.
     */
    async createOwner(tx: Executor, accountId: number, email: string, passwordHash: string): Promise<void> {
      if (await usersRepo.findByEmail(tx, email))
        throw ApiError.data(`email ${email} is already used by a user`);
      await usersRepo.insert(tx, {
        account_id: accountId,
        email,
        password_hash: passwordHash,
        role: 'owner',
        created_at: clock.now(),
      });
    },

    /**
     * The console's sign-in: a user's e-mail and password (with the brake on wrong passwords), then its
     * account as the caller (-1 when locked). An invited user without a password cannot sign in. A user with
     * two-factor gets a pending sign-in instead, which a code completes (two-factor.service.ts).
     */
    async authenticate(rawEmail: string, password: string): Promise<AuthContext | PendingSignIn> {
      const email = rawEmail.trim().toLowerCase();
      const user = await usersRepo.findByEmail(db, email);
      const ok = await passwords.check(email, password, user?.password_hash ?? undefined);
      if (!ok || !user) throw ApiError.auth('unknown e-mail or wrong password');
      const auth = await accounts.signInAs(Number(user.account_id));
      if (user.totp_secret !== null) {
        const token = randomBytes(32).toString('base64url');
        const expiresAt = clock.now() + signInStepMs;
        await usersRepo.setSignIn(db, Number(user.id), hashLink(token), expiresAt);
        return { code_needed: true, pending_token: token, expires_at: expiresAt };
      }
      return { ...auth, userId: Number(user.id), role: roleOf(user.role, 'role') };
    },

    /** A user's e-mail, read in the caller's transaction (the audit log names a console user so). */
    async email(ex: Executor, userId: number): Promise<string | null> {
      return (await usersRepo.find(ex, userId))?.email ?? null;
    },

    /** The account of the user an e-mail names (any case), if any: a failed sign-in's entry goes to it. */
    async accountOfEmail(rawEmail: string): Promise<number | undefined> {
      const user = await usersRepo.findByEmail(db, rawEmail.trim().toLowerCase());
      return user === undefined ? undefined : Number(user.account_id);
    },

    /** The user behind a console session, read again on every request: undefined once removed. */
    async sessionUser(userId: number) {
      const user = await usersRepo.find(db, userId);
      if (!user) return undefined;
      return { accountId: Number(user.account_id), email: user.email, role: roleOf(user.role, 'role') };
    },

    /** GET /users: the account's users, oldest first. */
    async list(auth: AuthContext) {
      return (await usersRepo.list(db, auth.accountId)).map(view);
    },

    /** POST /users: invites a user by e-mail (SMTP_URL needed); the link goes to the e-mail only. */
    async invite(auth: AuthContext, input: { email?: unknown; role?: unknown }) {
      const { user, expires_at } = await invite(auth, auth.accountId, input.email, input.role, 'always');
      return { ...user, invitation_expires_at: expires_at };
    },

    /** PUT /users/:id: another role; the last owner stays owner. */
    async changeRole(auth: AuthContext, rawId: string, input: { role?: unknown }) {
      const id = idIn(rawId);
      if (id === undefined) throw noSuchUser(rawId);
      await change(auth, auth.accountId, id, rawId, roleOf(input.role));
      return view(await anyUser(id));
    },

    /** DELETE /users/:id: the user and its rights go at once (its sessions answer -1 from the next request). */
    async remove(auth: AuthContext, rawId: string) {
      const id = idIn(rawId);
      if (id === undefined) throw noSuchUser(rawId);
      await change(auth, auth.accountId, id, rawId, null);
      return idOut(id);
    },

    /**
     * POST /users/accept: a link's token and a new password. The link works once and until it expires; a
     * wrong, used or expired one is -1 and changes nothing.
     */
    async accept(input: { token?: unknown; password?: unknown }, clientIp: string | null = null) {
      const token = typeof input.token === 'string' ? input.token.trim() : '';
      if (token === '') throw ApiError.data('user.token is required: the one in the link');
      const hash = hashLink(token);
      const now = clock.now();
      const pending = await usersRepo.findByLink(db, hash);
      if (!pending) throw ApiError.auth('this link is unknown or was already used');
      if (Number(pending.link_expires_at) <= now) {
        throw ApiError.auth('this link has expired: ask the account owner (or the operator) for a new one');
      }
      const password = checkNewPassword(input.password, pending.email);
      const passwordHash = await passwords.hash(password);
      const used = await db.transaction().execute(async (tx) => {
        const row = await usersRepo.useLink(tx, hash, passwordHash, now);
        if (!row) return undefined;
        // The link's holder acts: the user whose password it sets.
        await deps.audit.record(tx, {
          accountId: Number(row.account_id),
          action: 'user.set_password',
          objectType: 'user',
          objectId: Number(row.id),
          actor: { kind: 'user', id: Number(row.id), ip: clientIp },
        });
        return row;
      });
      if (!used) throw ApiError.auth('this link is unknown or was already used');
      // A reset ends every session: whoever knew the old password is signed out.
      await deps.sessions.endAll(Number(used.id));
      return view(await anyUser(Number(used.id)));
    },

    /** `pigeon user add ACCOUNT_ID EMAIL --role ROLE`: the user, its link (printed), e-mailed when SMTP is set. */
    async operatorAdd(accountId: number, email: string, role: string | undefined) {
      if (!(await accounts.exists(accountId))) throw ApiError.notFound(`account ${accountId} does not exist`);
      const { user, link, expires_at, emailed } = await invite(undefined, accountId, email, role, 'if-set');
      return { account_id: idOut(accountId), ...user, link, link_expires_at: expires_at, emailed };
    },

    /** `pigeon user list --account ID`. */
    async operatorList(accountId: number) {
      if (!(await accounts.exists(accountId))) throw ApiError.notFound(`account ${accountId} does not exist`);
      return (await usersRepo.list(db, accountId)).map((row) => ({
        account_id: idOut(accountId),
        ...view(row),
      }));
    },

    /** `pigeon user remove USER_ID`: as DELETE /users/:id, for any account; the last owner stays. */
    async operatorRemove(userId: number) {
      const user = await anyUser(userId);
      await change(undefined, Number(user.account_id), userId, userId, null);
      return { id: idOut(userId), account_id: idOut(user.account_id), removed: true };
    },

    /**
     * `pigeon user reset-password USER_ID`: a new one-time link (the one before stops working); the current
     * password keeps working until the link is used.
     */
    async operatorResetPassword(userId: number) {
      const user = await anyUser(userId);
      const { link, expires_at } = await withEntry(
        db,
        deps.audit,
        {
          accountId: Number(user.account_id),
          action: 'user.reset_password',
          objectType: 'user',
          objectId: userId,
        },
        (tx) => links.open(tx, userId, deps.linkTtlMs),
      );
      return { id: idOut(userId), email: user.email, link, link_expires_at: expires_at };
    },
  };
}
