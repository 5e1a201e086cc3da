// Authentication (API tokens, legacy body credentials, a console session's caller), the tokens kept in memory
// for it, and the tokens' creation, reads and revocation.
import { type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import { type AuthContext, type TokenScope, tokenScopes } from '../shared/auth-context.ts';
import { wholeNumberIn } from '../shared/bounds.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { isLocked, lockedAccount, notASubAccount } from './account-errors.ts';
import { accountsRepo } from './accounts.repo.ts';
import { createPasswordGuard, type PasswordGuardOptions } from './password-guard.ts';
import { hashToken, ipAllowed, isIpOrCidr, newToken } from './secrets.ts';
import { tokenDateClamp } from './token-dates.ts';
import { type TokenOwner, tokensRepo } from './tokens.repo.ts';
import type { CreatedTokenView, TokenInfoView } from './tokens.schemas.ts';

export interface TokenRequest {
  name: string;
  ttl?: number;
  allowed_ips?: string[] | string;
  /** full (the default), send or read; checked here. */
  scope?: unknown;
}

/** Legacy body credentials (`sms.authentication`): the account's e-mail and password. */
export interface LegacyCredentials {
  username: string;
  password: string;
}

/** last_used_at is written at most once a minute per token, so reads stay reads. */
const touchEveryMs = 60_000;
/**
 * How long a token's owner, expiry and allowed IPs are taken from memory before they are read again. A token
 * revoked here stops working at once; one revoked by another process, within this time.
 */
const tokenMemoryMs = 1_000;
const maxTokensInMemory = 10_000;
const maxTokenNameLength = 100;
/** The longest life a token may be given: ten years (omit `ttl` for a token that never expires). */
const maxTokenTtlSeconds = 10 * 365 * 86_400;

export type TokensService = ReturnType<typeof createTokensService>;

export function createTokensService(deps: {
  db: Db;
  clock: Clock;
  timezone: string;
  passwordGuard?: PasswordGuardOptions;
  /** Whether the caller's own rights (its role, its token's scope) cover every right of a token's scope. */
  scopes?: { mayGrant(auth: AuthContext, scope: TokenScope): boolean };
  /** The audit log: a token's creation and deletion, in their transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, timezone, audit } = deps;

  // `Y-m-d H:i:s` for the reads (the form the Java SDK parses).
  const { wallTime } = zonedTime(timezone);
  const tokenDate = tokenDateClamp(timezone);
  const passwords = createPasswordGuard({ clock, options: deps.passwordGuard });

  // Tokens seen lately, by hash: a send at thousands a second should not read its token each time.
  const knownTokens = new Map<string, { owner: TokenOwner; readAt: number }>();

  async function tokenOwner(tokenHash: string, now: number): Promise<TokenOwner | undefined> {
    const known = knownTokens.get(tokenHash);
    if (known && now - known.readAt < tokenMemoryMs && now >= known.readAt) return known.owner;
    const owner = await tokensRepo.findByHash(db, tokenHash);
    if (!owner) {
      knownTokens.delete(tokenHash);
      return undefined;
    }
    if (knownTokens.size >= maxTokensInMemory) knownTokens.clear();
    knownTokens.set(tokenHash, { owner, readAt: now });
    return owner;
  }

  /** A lock or unlock takes effect at once in this process (in others, within `tokenMemoryMs`). */
  function forgetTokensOf(accountId: number): void {
    for (const [hash, known] of knownTokens) {
      if (Number(known.owner.account_id) === accountId) knownTokens.delete(hash);
    }
  }

  /** Signs in with legacy body credentials; -1 for a wrong pair, a locked account or a refused username. */
  async function authenticateLegacy(credentials: LegacyCredentials): Promise<AuthContext> {
    const username = String(credentials.username ?? '')
      .trim()
      .toLowerCase();
    const password = String(credentials.password ?? '');
    if (username === '' || password === '') {
      throw ApiError.auth('sms.authentication needs a username (the account e-mail) and a password');
    }
    const account = await accountsRepo.findCredentials(db, username);
    if (!(await passwords.check(username, password, account?.password_hash))) {
      throw ApiError.auth('sms.authentication: unknown username or wrong password');
    }
    const id = Number(account!.id);
    if (isLocked(account!.locked)) throw lockedAccount(id, account!.locked);
    const parentId = account!.parent_id === null ? null : Number(account!.parent_id);
    // No token: tokenId 0 (ids start at 1).
    return { accountId: id, tokenId: 0, parentId };
  }

  function normalizeAllowedIps(value: string[] | string | undefined): string[] | null {
    if (value === undefined) return null;
    const entries = (Array.isArray(value) ? value : value.split(','))
      .map((v) => String(v).trim())
      .filter((v) => v !== '');
    if (entries.length === 0) return null;
    for (const entry of entries) {
      if (!isIpOrCidr(entry))
        throw ApiError.data(`token.allowed_ips: "${entry}" is not an IP address or CIDR block`);
    }
    return entries;
  }

  function scopeOf(value: unknown): TokenScope {
    if (value === undefined || value === null || value === '') return 'full';
    const scope = tokenScopes.find((s) => s === value);
    if (scope === undefined) {
      throw ApiError.data(`token.scope must be ${tokenScopes.join(', ')}, not ${JSON.stringify(value)}`);
    }
    return scope;
  }

  async function issueToken(
    ex: Executor,
    accountId: number,
    request: TokenRequest,
  ): Promise<CreatedTokenView> {
    const name = request.name.trim();
    if (name === '') throw ApiError.data('token.name must not be empty');
    if (name.length > maxTokenNameLength)
      throw ApiError.data(`token.name is longer than ${maxTokenNameLength} characters`);
    // Bounded so its expiry stays a date both databases store and every answer can print.
    const ttl =
      request.ttl === undefined
        ? undefined
        : wholeNumberIn('token.ttl', request.ttl, { min: 1, max: maxTokenTtlSeconds, unit: 'of seconds' });
    const allowed = normalizeAllowedIps(request.allowed_ips);
    const scope = scopeOf(request.scope);
    const token = newToken();
    const now = clock.now();
    const id = await tokensRepo.insert(
      ex,
      {
        account_id: accountId,
        name,
        token_hash: hashToken(token),
        expires_at: ttl === undefined ? null : now + ttl * 1000,
        allowed_ips: allowed ? JSON.stringify(allowed) : null,
        scope,
      },
      now,
    );
    return { token, token_id: idOut(id), allowed_ips: allowed ?? [], scope };
  }

  /**
   * Issues a token and writes its entry in one transaction: on the caller's account, by the caller (`auth`), or
   * without one on the token's account, by the process (the CLI).
   */
  function issueAudited(auth: AuthContext | undefined, accountId: number, request: TokenRequest) {
    return withEntry(
      db,
      audit,
      (created: CreatedTokenView) => ({
        accountId: auth?.accountId ?? accountId,
        auth,
        action: 'token.create',
        objectType: 'token',
        objectId: created.token_id,
      }),
      (tx) => issueToken(tx, accountId, request),
    );
  }

  /**
   * A token as GET /token answers it (never its secret): dates as `Y-m-d H:i:s` in TIMEZONE (the Java SDK
   * parses `created_at` so), `ttl` in seconds and `expired_at` null for a token that does not expire,
   * `is_active` 1 until it expires, `last_used_at` null until first used (it is written once a minute at most).
   */
  const tokenView = (
    row: NonNullable<Awaited<ReturnType<typeof tokensRepo.find>>>,
    now: number,
  ): TokenInfoView => {
    const expiresAt = row.expires_at === null ? null : Number(row.expires_at);
    // Dates shown within what `Y-m-d H:i:s` can write (token-dates.ts), the ttl agreeing with them.
    const createdAt = tokenDate(Number(row.created_at));
    const shownExpiry = expiresAt === null ? null : tokenDate(expiresAt);
    return {
      api_token_id: idOut(row.id),
      name: row.name,
      created_at: wallTime(createdAt),
      expired_at: shownExpiry === null ? null : wallTime(shownExpiry),
      ttl: shownExpiry === null ? null : Math.round((shownExpiry - createdAt) / 1000),
      is_active: expiresAt === null || expiresAt > now ? 1 : 0,
      allowed_ips: row.allowed_ips ? (JSON.parse(row.allowed_ips) as string[]) : [],
      last_used_at: row.last_used_at === null ? null : wallTime(tokenDate(Number(row.last_used_at))),
      scope: row.scope,
    };
  };

  return {
    /** A token issued in the caller's transaction (an account's first token, from its creation). */
    issue: issueToken,

    forgetTokensOf,

    /** A token's name, read in the caller's transaction (the audit log names its actors so). */
    tokenName: (ex: Executor, tokenId: number) => tokensRepo.nameOf(ex, tokenId),

    /**
     * Resolves an Authorization value (`Bearer x` or bare `x`), or legacy body credentials, to its account;
     * -1 for anything else, and for a locked account.
     */
    async authenticate(
      credential: string | LegacyCredentials | undefined,
      clientIp: string,
    ): Promise<AuthContext> {
      if (credential !== undefined && typeof credential === 'object') return authenticateLegacy(credential);
      const raw = (credential ?? '').trim().replace(/^Bearer\s+/i, '');
      if (raw === '') throw ApiError.auth('missing API token: send "Authorization: Bearer <token>"');
      const now = clock.now();
      const row = await tokenOwner(hashToken(raw), now);
      if (!row) throw ApiError.auth('unknown or revoked API token');
      if (row.expires_at !== null && row.expires_at <= now) throw ApiError.auth('API token has expired');
      if (row.allowed_ips && !ipAllowed(clientIp, JSON.parse(row.allowed_ips) as string[])) {
        throw ApiError.auth(`API token is not allowed from ${clientIp}`);
      }
      if (isLocked(row.locked)) throw lockedAccount(row.account_id, row.locked);
      if (row.last_used_at === null || now - row.last_used_at >= touchEveryMs) {
        await tokensRepo.touch(db, row.token_id, now);
        row.last_used_at = now;
      }
      return {
        accountId: row.account_id,
        tokenId: row.token_id,
        parentId: row.parent_id,
        scope: row.scope as TokenScope,
      };
    },

    /**
     * The caller a console session acts as: `accountId`, which `signedInId` signed in as, or one of its direct
     * sub-accounts; -1 when that no longer holds, or the account is locked.
     */
    async sessionContext(signedInId: number, accountId: number): Promise<AuthContext> {
      const row = await accountsRepo.find(db, accountId);
      const parentId = row?.parent_id === null || row === undefined ? null : Number(row.parent_id);
      if (!row || (accountId !== signedInId && parentId !== signedInId)) {
        throw ApiError.auth('this console session is no longer valid: sign in again');
      }
      if (isLocked(row.locked)) throw lockedAccount(accountId, row.locked);
      return { accountId, tokenId: 0, parentId };
    },

    /**
     * A token for the caller, or for one of its direct sub-accounts (-5 for any other account), never of a
     * scope wider than the caller's own rights (-1): a developer's or a send token's cannot be full.
     */
    async createToken(auth: AuthContext, request: TokenRequest, rawAccountId?: string) {
      const scope = scopeOf(request.scope);
      if (deps.scopes && !deps.scopes.mayGrant(auth, scope)) {
        const who = auth.role !== undefined ? `the role ${auth.role}` : `a token of scope ${auth.scope}`;
        throw ApiError.auth(`${who} may not create a token of scope ${scope}, which has rights it has not`);
      }
      let accountId = auth.accountId;
      if (rawAccountId !== undefined) {
        const forAccountId = idIn(rawAccountId);
        const target = forAccountId === undefined ? undefined : await accountsRepo.find(db, forAccountId);
        if (!target || (target.id !== auth.accountId && target.parent_id !== auth.accountId)) {
          throw notASubAccount(rawAccountId);
        }
        accountId = target.id;
      }
      return issueAudited(auth, accountId, { ...request, scope });
    },

    async createTokenForCli(accountId: number, name: string) {
      if (!(await accountsRepo.find(db, accountId)))
        throw ApiError.notFound(`account ${accountId} does not exist`);
      return issueAudited(undefined, accountId, { name });
    },

    /** `pigeon token list --account ID`: the account's tokens as GET /token shows them, with their account. */
    async operatorList(accountId: number) {
      if (!(await accountsRepo.find(db, accountId)))
        throw ApiError.notFound(`account ${accountId} does not exist`);
      const now = clock.now();
      return (await tokensRepo.list(db, accountId)).map((row) => ({
        account_id: idOut(accountId),
        ...tokenView(row, now),
      }));
    },

    /**
     * `pigeon token revoke ID`: deletes any account's token. It stops working at once in this process, and
     * within `tokenMemoryMs` in the server's.
     */
    async operatorRevoke(tokenId: number) {
      const accountId = await db.transaction().execute(async (tx) => {
        const owner = await tokensRepo.deleteAny(tx, tokenId);
        if (owner === undefined) throw ApiError.notFound(`token ${tokenId} does not exist`);
        await audit.record(tx, {
          accountId: owner,
          action: 'token.delete',
          objectType: 'token',
          objectId: tokenId,
        });
        return owner;
      });
      forgetTokensOf(accountId);
      return { token_id: idOut(tokenId), account_id: idOut(accountId), revoked: true };
    },

    async listTokens(auth: AuthContext) {
      const now = clock.now();
      return (await tokensRepo.list(db, auth.accountId)).map((row) => tokenView(row, now));
    },

    async getToken(auth: AuthContext, rawId: string) {
      const id = idIn(rawId);
      const row = id === undefined ? undefined : await tokensRepo.find(db, auth.accountId, id);
      if (!row) throw ApiError.notFound(`token "${rawId}" not found`);
      return tokenView(row, clock.now());
    },

    async deleteToken(auth: AuthContext, rawId: string) {
      const id = idIn(rawId);
      if (id === undefined) throw ApiError.notFound(`token "${rawId}" not found`);
      await db.transaction().execute(async (tx) => {
        // Written first: a token deleting itself is still there to be named as the actor.
        await audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'token.delete',
          objectType: 'token',
          objectId: id,
        });
        if (!(await tokensRepo.delete(tx, auth.accountId, id)))
          throw ApiError.notFound(`token "${rawId}" not found`);
      });
      knownTokens.clear();
      return idOut(id);
    },
  };
}
