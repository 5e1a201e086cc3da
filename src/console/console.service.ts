// The console's sessions: sign in with a user's e-mail and password (the account's owner's are the account's), a cookie that authenticates the
// same API routes a token does, a CSRF token every request made with it must carry (reads too), and a
// parent's switch into one of its sub-accounts' view. The console has no routes of its own beyond these:
// everything else it does goes through the API, with the API's rules and errors.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AccountView } from '../accounts/accounts.schemas.ts';
import type { Actor, AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext, Role } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError, Status } from '../shared/errors.ts';
import type { Db } from '../store/db.ts';
import { consoleSessionsRepo } from './console-sessions.repo.ts';

export const sessionCookieName = 'pigeon_session';
/** The header the console page sends its CSRF token in. */
export const csrfHeaderName = 'x-csrf-token';

/** A sign-in whose password was right, waiting for the user's two-factor code (the users service's). */
export interface CodeNeeded {
  code_needed: true;
  pending_token: string;
  expires_at: number;
}

/** What the console reads of accounts and their users, through their services. */
export interface ConsoleAccounts {
  /**
   * Checks a user's e-mail and password (with the brake on wrong passwords); -1 for a wrong pair or a lock.
   * The answer names the user (`userId`, `role`), or asks for its two-factor code.
   */
  authenticate(
    credentials: { username: string; password: string },
    clientIp: string,
  ): Promise<AuthContext | CodeNeeded>;
  /** The second step: a pending sign-in's token and a code (or recovery code); -1 when wrong or used. */
  completeSignIn(pendingToken: unknown, code: unknown): Promise<AuthContext>;
  sessionContext(signedInId: number, accountId: number): Promise<AuthContext>;
  /** The user behind a session, read on every request: undefined once removed. */
  user(userId: number): Promise<{ accountId: number; email: string; role: Role } | undefined>;
  account(auth: AuthContext): Promise<AccountView>;
  /** The account an e-mail names, if any (a failed sign-in's entry goes to it). */
  idByEmail(email: string): Promise<number | undefined>;
  /** What a role may do (the users' permission table): its permissions and the API routes they open. */
  rights(role: Role): { permissions: string[]; routes: string[] };
}

export interface ConsoleServiceDeps {
  db: Db;
  clock: Clock;
  accounts: ConsoleAccounts;
  sessionHours: number;
  timeZone: string;
  /** The opt-out mention added to marketing texts (STOP_MENTION), for the send form's counter. */
  stopMention: string;
  /** The length of every short URL a `<-short->` becomes, for the same counter. */
  shortUrlLength: number;
  /** The audit log: sign-ins (failed ones too), switches and sign-outs. */
  audit: AuditTrail;
  /** A failed sign-in's entry that could not be written is logged here: nobody waits for it. */
  log: { warn(object: object, message: string): void };
}

/** What the page knows of its session: who it is, whose view it shows, and the token its changes carry. */
export interface SessionView {
  csrf_token: string;
  signed_in_account_id: number;
  /** The user who signed in, its e-mail and its role (read again on every request). */
  user_id: number;
  email: string;
  role: Role;
  /** What that role may do now: its permissions, and the API routes (`POST /send`) they open. */
  permissions: string[];
  routes: string[];
  /** The account whose view the session shows (the signed-in one, or a sub-account after a switch). */
  account_id: number;
  /** That account's parent, if it is a sub-account. */
  parent_id: number | null;
  account: AccountView;
  /** The zone the API's dates are in (TIMEZONE): the console shows dates in it. */
  timezone: string;
  /** STOP_MENTION: what a marketing text gets appended, which its length and cost include. */
  stop_mention: string;
  /** How many characters each `<-short->` becomes (LINK_BASE_URL, a slash and the code). */
  short_url_length: number;
  expires_at: number;
}

const hashOf = (cookie: string) => createHash('sha256').update(cookie).digest('hex');
const signInAgain = () => ApiError.auth('no console session, or it has expired: sign in again');

function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Runs a sign-in's check within the HTTP layer's limits: refuses, or counts a failure, per client. */
export type SignInBrake = <T>(check: () => Promise<T>) => Promise<T>;

/** Where a sign-in comes from, as the user's list of sessions shows it. */
export interface SignInClient {
  ip: string;
  userAgent: string | undefined;
}

/** A session's `last_used_at` is written at most this often: a read need not write every time. */
const touchEveryMs = 60_000;

export type ConsoleService = ReturnType<typeof createConsoleService>;

export function createConsoleService(deps: ConsoleServiceDeps) {
  const { db, clock, accounts, audit } = deps;
  /** A session's person: the user who signed in. */
  const signedIn = (accountId: number, ip: string | null, userId?: number): Actor => ({
    kind: 'user',
    id: userId ?? null,
    accountId,
    ip,
  });

  /**
   * A wrong e-mail or password, a locked account: its entry on the account the e-mail names, if any. Written
   * after the answer is on its way, so that neither the answer nor its time tells whether the e-mail is a
   * user's (a crash in between loses the entry of a sign-in that changed nothing).
   */
  function recordFailureLater(email: string, clientIp: string): void {
    setImmediate(() =>
      recordFailure(email, clientIp).catch((err: unknown) =>
        deps.log.warn({ err }, 'could not write the audit entry of a failed console sign-in'),
      ),
    );
  }

  async function recordFailure(email: string, clientIp: string): Promise<void> {
    const accountId = await accounts.idByEmail(email);
    if (accountId === undefined) return;
    await db.transaction().execute((tx) =>
      audit.record(tx, {
        accountId,
        action: 'session.sign_in_failed',
        objectType: 'session',
        actor: { kind: 'user', id: null, label: email.trim().toLowerCase().slice(0, 200), ip: clientIp },
      }),
    );
  }
  const ttlMs = deps.sessionHours * 3_600_000;

  async function live(cookie: string | undefined) {
    if (!cookie) throw signInAgain();
    const session = await consoleSessionsRepo.findLive(db, hashOf(cookie), clock.now());
    if (!session || session.user_id === null) throw signInAgain();
    return {
      ...session,
      id: Number(session.id),
      user_id: Number(session.user_id),
      account_id: Number(session.account_id),
      acting_account_id: Number(session.acting_account_id),
      expires_at: Number(session.expires_at),
      last_used_at: session.last_used_at === null ? null : Number(session.last_used_at),
    };
  }

  /** Opens a session for a signed-in caller: its cookie value and view. */
  async function open(auth: AuthContext, client: SignInClient) {
    const cookie = randomBytes(32).toString('base64url');
    const now = clock.now();
    await db.transaction().execute(async (tx) => {
      await consoleSessionsRepo.insert(tx, {
        session_hash: hashOf(cookie),
        account_id: auth.accountId,
        acting_account_id: auth.accountId,
        user_id: auth.userId ?? null,
        csrf_token: randomBytes(24).toString('base64url'),
        created_at: now,
        expires_at: now + ttlMs,
        last_used_at: now,
        ip: client.ip,
        // Only for the person to recognise it: bounded, so a client cannot store a novel.
        user_agent: client.userAgent?.slice(0, 300) ?? null,
      });
      await audit.record(tx, {
        accountId: auth.accountId,
        action: 'session.sign_in',
        objectType: 'session',
        actor: signedIn(auth.accountId, client.ip, auth.userId),
      });
    });
    return { cookie, maxAgeSeconds: Math.floor(ttlMs / 1000), view: await view(await live(cookie)) };
  }

  /** The console user behind an API caller, or -1: a token has no sessions. */
  function userOf(auth: AuthContext): number {
    if (auth.userId === undefined) throw ApiError.auth('only a user signed in to the console has sessions');
    return auth.userId;
  }

  /**
   * Every request made with the session carries its CSRF token, whatever its method: HTTP 403, -1 otherwise.
   * Reads are no exception, because some of the API's GET routes change things (GET /send sends and spends
   * credits, GET /account/:id/lock locks an account), and the console loads nothing by plain navigation.
   */
  function checkCsrf(method: string, given: string | undefined, expected: string): void {
    if (sameToken(given, expected)) return;
    throw new ApiError(
      Status.auth,
      `${method} with a console session needs its CSRF token in the X-CSRF-Token header`,
      403,
    );
  }

  /**
   * The caller a session acts as, checked on every request: its user still exists, still a user of the
   * signed-in account, with the role it has now; the acting account is still one it may act as, unlocked.
   */
  async function sessionCaller(session: Awaited<ReturnType<typeof live>>) {
    const user = await accounts.user(session.user_id);
    if (!user || user.accountId !== session.account_id) {
      throw ApiError.auth('the user of this console session was removed: sign in again');
    }
    const auth = await accounts.sessionContext(session.account_id, session.acting_account_id);
    return { auth: { ...auth, userId: session.user_id, role: user.role }, user };
  }

  async function view(session: Awaited<ReturnType<typeof live>>): Promise<SessionView> {
    const { auth, user } = await sessionCaller(session);
    return {
      csrf_token: session.csrf_token,
      signed_in_account_id: session.account_id,
      user_id: session.user_id,
      email: user.email,
      role: user.role,
      ...accounts.rights(user.role),
      account_id: auth.accountId,
      parent_id: auth.parentId,
      account: await accounts.account(auth),
      timezone: deps.timeZone,
      stop_mention: deps.stopMention,
      short_url_length: deps.shortUrlLength,
      expires_at: session.expires_at,
    };
  }

  return {
    /**
     * POST /console/session: a new session for a right e-mail and password; its cookie value and view. The
     * password check runs inside `brake`: the API's brake on failed sign-ins per client IP (rate-limits.ts),
     * which counts a wrong pair as a failure and refuses a braked address before checking anything.
     */
    async signIn(
      email: unknown,
      password: unknown,
      client: SignInClient,
      brake: SignInBrake = (check) => check(),
    ) {
      if (
        typeof email !== 'string' ||
        email.trim() === '' ||
        typeof password !== 'string' ||
        password === ''
      ) {
        throw ApiError.data('email and password are required');
      }
      // A user's e-mail and password (the users service answers -1 in the form's words); a failure is audited.
      const auth = await brake(() =>
        accounts.authenticate({ username: email, password }, client.ip).catch((error) => {
          recordFailureLater(email, client.ip);
          throw error;
        }),
      );
      if ('code_needed' in auth) return { codeNeeded: auth };
      return { opened: await open(auth, client) };
    },

    /**
     * POST /console/session/code: a two-factor sign-in's second step; a wrong or used code counts toward the
     * same brake as a wrong password.
     */
    async signInWithCode(
      pendingToken: unknown,
      code: unknown,
      client: SignInClient,
      brake: SignInBrake = (check) => check(),
    ) {
      const auth = await brake(() => accounts.completeSignIn(pendingToken, code));
      return open(auth, client);
    },

    /** GET /console/session: the session's view, for the page that loads. */
    async current(cookie: string | undefined): Promise<SessionView> {
      return view(await live(cookie));
    },

    /**
     * The caller of an API request made with a session cookie: the account its view shows. Changes need the
     * CSRF token.
     */
    async authenticate(cookie: string, method: string, csrf: string | undefined): Promise<AuthContext> {
      const session = await live(cookie);
      checkCsrf(method, csrf, session.csrf_token);
      const { auth } = await sessionCaller(session);
      const now = clock.now();
      if (session.last_used_at === null || now - session.last_used_at >= touchEveryMs) {
        await consoleSessionsRepo.touch(db, session.id, now);
      }
      return { ...auth, sessionId: session.id };
    },

    /** GET /users/me/sessions: the caller's live sessions, newest first, the current one marked. */
    async sessionsOf(auth: AuthContext) {
      const rows = await consoleSessionsRepo.listOfUser(db, userOf(auth), clock.now());
      return rows.map((row) => ({
        id: String(row.id),
        created_at: Number(row.created_at),
        last_used_at: row.last_used_at === null ? null : Number(row.last_used_at),
        ip: row.ip,
        user_agent: row.user_agent,
        expires_at: Number(row.expires_at),
        current: Number(row.id) === auth.sessionId,
      }));
    },

    /** DELETE /users/me/sessions/:id: ends one of the caller's sessions; -5 for any other. */
    async endSession(auth: AuthContext, rawId: string) {
      const id = Number(rawId);
      const userId = userOf(auth);
      if (!(Number.isSafeInteger(id) && id > 0))
        throw ApiError.notFound(`session "${rawId}" is not one of this user's`);
      await db.transaction().execute(async (tx) => {
        if ((await consoleSessionsRepo.deleteOfUser(tx, userId, id)) === 0)
          throw ApiError.notFound(`session "${rawId}" is not one of this user's`);
        await audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'session.end',
          objectType: 'session',
          objectId: id,
        });
      });
    },

    /** DELETE /users/me/sessions: signs the caller out everywhere, this session too. */
    async endAllOf(auth: AuthContext) {
      const userId = userOf(auth);
      await db.transaction().execute(async (tx) => {
        await consoleSessionsRepo.deleteAllOfUser(tx, userId, undefined);
        await audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'session.end_all',
          objectType: 'user',
          objectId: userId,
        });
      });
    },

    /** Ends a user's sessions (a reset, a password change, a removal), but `exceptSessionId`'s. */
    endAll: (userId: number, exceptSessionId?: number) =>
      consoleSessionsRepo.deleteAllOfUser(db, userId, exceptSessionId),

    /**
     * PUT /console/session/account: shows one direct sub-account's view, or (null) the signed-in one's again.
     * `clientIp` goes in its audit entry.
     */
    async switchTo(
      cookie: string | undefined,
      csrf: string | undefined,
      rawAccountId: unknown,
      clientIp: string,
    ) {
      const session = await live(cookie);
      checkCsrf('PUT', csrf, session.csrf_token);
      const target =
        rawAccountId === null || rawAccountId === undefined || rawAccountId === ''
          ? session.account_id
          : Number(rawAccountId);
      if (!Number.isSafeInteger(target) || target <= 0) {
        throw ApiError.data('account_id must be the id of a sub-account, or null');
      }
      try {
        await accounts.sessionContext(session.account_id, target);
      } catch (error) {
        // A locked sub-account says so; any other account is not one of the caller's.
        if (target === session.account_id || String((error as ApiError).details).includes('locked'))
          throw error;
        throw ApiError.notFound(`account "${String(rawAccountId)}" is not a sub-account of this account`);
      }
      await db.transaction().execute(async (tx) => {
        await consoleSessionsRepo.setActing(tx, session.id, target);
        await audit.record(tx, {
          accountId: session.account_id,
          action: 'session.switch',
          objectType: 'account',
          objectId: target,
          actor: signedIn(session.account_id, clientIp, session.user_id ?? undefined),
        });
      });
      return view({ ...session, acting_account_id: target });
    },

    /** DELETE /console/session: signs out; the cookie no longer authenticates anything. */
    async signOut(cookie: string | undefined, csrf: string | undefined, clientIp: string): Promise<void> {
      const session = await live(cookie);
      checkCsrf('DELETE', csrf, session.csrf_token);
      await db.transaction().execute(async (tx) => {
        await consoleSessionsRepo.delete(tx, hashOf(cookie!));
        await audit.record(tx, {
          accountId: session.account_id,
          action: 'session.sign_out',
          objectType: 'session',
          actor: signedIn(session.account_id, clientIp, session.user_id ?? undefined),
        });
      });
    },

    /** Removes sessions expired by `before`, at most `limit`; how many went (the prune job). */
    pruneExpired: (before: number, limit: number) => consoleSessionsRepo.deleteExpired(db, before, limit),
  };
}
