// Accounts, sub-accounts, credits, authentication, tokens and the balance notification setting.
import type { AuthContext } from '../shared/auth-context.ts';
import { wholeNumberIn } from '../shared/bounds.ts';
import type { Clock } from '../shared/clock.ts';
import type { Erasure } from '../shared/erasure.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { appendEvents } from '../store/outbox.ts';
import {
  type AccountRow,
  accountView,
  checkCredentials,
  emailPattern,
  parseSubAccount,
  type SubAccountInput,
} from './account-profile.ts';
import { accountsRepo, type NewAccount } from './accounts.repo.ts';
import { accountsLifecycleRepo } from './accounts-lifecycle.repo.ts';
import { type BalanceAlert, serializeAlert } from './alert-messages.ts';
import { alertsRepo, type NewAlertJob, type NotificationFields, notificationRepo } from './alerts.repo.ts';
import { creditsRepo } from './credits.repo.ts';
import { createPasswordGuard, type PasswordGuardOptions } from './password-guard.ts';
import { hashPassword, hashToken, ipAllowed, isIpOrCidr, newToken } from './secrets.ts';
import { tokenDateClamp } from './token-dates.ts';
import { type TokenOwner, tokensRepo } from './tokens.repo.ts';

export interface TokenRequest {
  name: string;
  ttl?: number;
  allowed_ips?: string[] | string;
}

/** Legacy body credentials (`sms.authentication`): the account's e-mail and password. */
export interface LegacyCredentials {
  username: string;
  password: string;
}

/**
 * What a sub-account's lock does to its queued messages (they are delivery's: `src/deps.ts` wires this to
 * the delivery service). Both run inside the lock's or the unlock's transaction.
 */
export interface HeldMessages {
  /** Holds the account's queued messages: no worker takes them until they are released. */
  hold(tx: Executor, accountId: number): Promise<number>;
  /** Queues the account's held messages again, due when they were. */
  release(tx: Executor, accountId: number): Promise<number>;
  /** Told after an unlock committed released messages (a nudge to the delivery worker). */
  released?(): void;
}

/**
 * The invoice a sub-account gets for the credits a transfer gives it (`invoices.service.ts`, wired in
 * `src/deps.ts`), written in the transfer's transaction.
 */
export interface TransferInvoices {
  transferred(tx: Executor, toAccountId: number, credits: number, fromAccountId: number): Promise<unknown>;
}

export interface TransferRequest {
  to_account: string;
  credits: string;
}

export interface NewAccountRequest {
  email: string;
  password: string;
  credits?: number;
  parentId?: number;
  unlimited?: boolean;
  firstName?: string;
  lastName?: string;
  company?: string;
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

const lockedAccount = (accountId: number) =>
  ApiError.auth(`account ${accountId} is locked by its parent account: it cannot use the API until unlocked`);

export type AccountsService = ReturnType<typeof createAccountsService>;

export function createAccountsService(deps: {
  db: Db;
  clock: Clock;
  timezone: string;
  heldMessages: HeldMessages;
  passwordGuard?: PasswordGuardOptions;
  invoices?: TransferInvoices;
}) {
  const { db, clock, timezone, heldMessages } = deps;

  // Whole seconds with the zone's offset, as the DLR and MO events have it; `Y-m-d H:i:s` for the reads (the
  // form the Java SDK parses).
  const { isoSecond, wallTime } = zonedTime(timezone);
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
    if (Number(account!.locked) === 1) throw lockedAccount(id);
    const parentId = account!.parent_id === null ? null : Number(account!.parent_id);
    // No token: tokenId 0 (ids start at 1).
    return { accountId: id, tokenId: 0, parentId };
  }

  /**
   * After credits went down to `balance`: if that is at or below the account's alert trigger and the
   * setting is armed, disarms it and writes the BALANCE_ALERT event and the e-mail and SMS the setting asks
   * for, all in the caller's transaction, so the alert exists exactly when the debit does.
   */
  async function alertIfCrossed(tx: Executor, accountId: number, balance: number): Promise<void> {
    const setting = await alertsRepo.disarmIfCrossed(tx, accountId, balance);
    if (!setting) return;
    const now = clock.now();
    const alert: BalanceAlert = { balance, trigger: Number(setting.alert_trigger), date: isoSecond(now) };
    const payload = serializeAlert(alert);
    await appendEvents(
      tx,
      [{ account_id: accountId, campaign_id: null, type: 'BALANCE_ALERT', payload }],
      now,
    );
    const jobs: NewAlertJob[] = [];
    if (setting.alert_email === '1' && setting.email !== '') {
      jobs.push({ account_id: accountId, kind: 'email', recipient: setting.email, payload });
    }
    if (setting.alert_gsm === '1' && setting.phone_number !== '') {
      jobs.push({ account_id: accountId, kind: 'sms', recipient: setting.phone_number, payload });
    }
    await alertsRepo.insertJobs(tx, jobs, now);
  }

  /**
   * The account whose credits an account spends: itself, or up its parents while they are unlimited. With
   * `refuseLocked`, a locked account (the first one: the sender) is a -1.
   */
  async function billedAccount(ex: Executor, accountId: number, refuseLocked = false): Promise<number> {
    let id = accountId;
    for (let hops = 0; hops < 16; hops++) {
      const account = await accountsRepo.find(ex, id);
      if (!account) throw ApiError.notFound(`account ${id} does not exist`);
      if (refuseLocked && hops === 0 && Number(account.locked) === 1) throw lockedAccount(id);
      if (!account.unlimited || account.parent_id === null) return id;
      id = account.parent_id;
    }
    throw new ApiError(Status.unknown, 'sub-account chain too deep');
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

  async function issueToken(ex: Executor, accountId: number, request: TokenRequest) {
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
      },
      now,
    );
    return { token, token_id: idOut(id), allowed_ips: allowed ?? [] };
  }

  /**
   * A token as GET /token answers it (never its secret): dates as `Y-m-d H:i:s` in TIMEZONE (the Java SDK
   * parses `created_at` so), `ttl` in seconds and `expired_at` null for a token that does not expire,
   * `is_active` 1 until it expires, `last_used_at` null until first used (it is written once a minute at most).
   */
  const tokenView = (row: NonNullable<Awaited<ReturnType<typeof tokensRepo.find>>>, now: number) => {
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
    };
  };

  /** Credits the account can spend: its own, or its paying parent's for an unlimited sub-account. */
  async function spendable(row: {
    id: number;
    credits: number;
    unlimited: number;
    parent_id: number | null;
  }) {
    if (Number(row.unlimited) !== 1 || row.parent_id === null) return Number(row.credits);
    const billed = await billedAccount(db, Number(row.id));
    return Number((await accountsRepo.find(db, billed))!.credits);
  }

  const subAccountView = async (row: AccountRow & { credits: number; parent_id: number | null }) =>
    accountView(row, await spendable(row), 'null');

  const notASubAccount = (raw: unknown) =>
    ApiError.notFound(`account "${String(raw)}" is not a sub-account of this account`);

  const emailTaken = (email: string, prefix: string) =>
    ApiError.data(`${prefix}email ${email} is already used by an account`);

  /**
   * Inserts an account and runs `after` in its transaction. The e-mail is checked first; two creations with
   * one e-mail at once are told apart by the unique index, and the loser gets the same -7.
   */
  async function storeAccount<T>(
    account: NewAccount,
    prefix: string,
    after: (tx: Executor, id: number) => Promise<T>,
  ): Promise<T> {
    try {
      return await db.transaction().execute(async (tx) => {
        if (await accountsRepo.findByEmail(tx, account.email)) throw emailTaken(account.email, prefix);
        return after(tx, await accountsRepo.insert(tx, account));
      });
    } catch (error) {
      if (!(error instanceof ApiError) && (await accountsRepo.findByEmail(db, account.email))) {
        throw emailTaken(account.email, prefix);
      }
      throw error;
    }
  }

  /** Locks or unlocks a direct sub-account of the caller, its queued messages held or released with it. */
  async function setLock(auth: AuthContext, rawId: string, locked: 0 | 1) {
    const id = idIn(rawId);
    if (id === undefined) throw notASubAccount(rawId);
    const moved = await db.transaction().execute(async (tx) => {
      if (!(await accountsRepo.setLocked(tx, auth.accountId, id, locked))) {
        // Already in that state, or not the caller's sub-account.
        if (!(await accountsRepo.child(tx, auth.accountId, id))) throw notASubAccount(rawId);
      }
      // Also when the state was already set: a message queued in a race with the lock is held now.
      return locked ? heldMessages.hold(tx, id) : heldMessages.release(tx, id);
    });
    forgetTokensOf(id);
    if (!locked && moved > 0) heldMessages.released?.();
    return { state: locked ? 'locked' : 'unlocked' };
  }

  return {
    billedAccount,

    /** An account from the operator's CLI (any level), with credits and a first token. */
    async createAccount(request: NewAccountRequest): Promise<{ account_id: string; token: string }> {
      const email = checkCredentials(request.email, request.password);
      const credits = request.credits ?? 0;
      if (!Number.isSafeInteger(credits) || credits < 0)
        throw ApiError.data('credits must be a non-negative integer');
      if (request.parentId !== undefined && !(await accountsRepo.find(db, request.parentId))) {
        throw ApiError.notFound(`parent account ${request.parentId} does not exist`);
      }
      const passwordHash = await hashPassword(request.password);
      const now = clock.now();
      const account: NewAccount = {
        parent_id: request.parentId ?? null,
        email,
        password_hash: passwordHash,
        first_name: request.firstName ?? null,
        last_name: request.lastName ?? null,
        company: request.company ?? null,
        credits,
        unlimited: request.unlimited ? 1 : 0,
        created_at: now,
      };
      return storeAccount(account, '', async (tx, accountId) => {
        if (credits > 0) {
          await creditsRepo.recordLedger(
            tx,
            {
              account_id: accountId,
              delta: credits,
              balance_after: credits,
              reason: 'initial',
              campaign_id: null,
            },
            now,
          );
        }
        const { token } = await issueToken(tx, accountId, { name: 'default' });
        return { account_id: idOut(accountId), token };
      });
    },

    /**
     * POST /account: a sub-account of the caller, with no credits (a transfer gives it some) and no token (the
     * parent creates them with POST /token/account/:id). Sub-accounts have one level, as SMSFactor's.
     */
    async createSubAccount(auth: AuthContext, input: SubAccountInput) {
      if (auth.parentId !== null) {
        throw ApiError.data(
          `account ${auth.accountId} is a sub-account: a sub-account cannot have sub-accounts (one level, as SMSFactor)`,
        );
      }
      const { email, profile, unlimited } = parseSubAccount(input);
      const passwordHash = await hashPassword(input.password);
      const account: NewAccount = {
        parent_id: auth.accountId,
        email,
        password_hash: passwordHash,
        ...profile,
        credits: 0,
        unlimited,
        created_at: clock.now(),
      };
      const id = await storeAccount(account, 'account.', async (_tx, accountId) => accountId);
      return { id: idOut(id), active: 1 };
    },

    /** GET /account: the caller's account object. */
    async account(auth: AuthContext) {
      const row = await accountsRepo.profile(db, auth.accountId);
      if (!row) throw ApiError.notFound(`account ${auth.accountId} does not exist`);
      return accountView(row, await spendable(row), 'text');
    },

    /** GET /sub-accounts: the caller's direct sub-accounts, oldest first. */
    async subAccounts(auth: AuthContext) {
      const rows = await accountsRepo.children(db, auth.accountId);
      const views = [];
      for (const row of rows) views.push(await subAccountView(row));
      return views;
    },

    /**
     * The accounts a caller's erasure (POST /erase) covers: its own and its direct sub-accounts, on which a
     * parent acts already (tokens, credits, lock). Ids in ascending order, the caller's first.
     */
    async erasureAccounts(auth: AuthContext): Promise<number[]> {
      const children = await accountsRepo.children(db, auth.accountId);
      return [auth.accountId, ...children.map((c) => Number(c.id))];
    },

    /** Whether an account exists (the operator's commands name one). */
    async exists(accountId: number): Promise<boolean> {
      return (await accountsRepo.profile(db, accountId)) !== undefined;
    },

    /**
     * Erasure, in the caller's transaction: the number leaves the accounts' profile phone, their balance
     * notification (with its SMS alert, which has nowhere to go), their alert jobs addressed to it, and the
     * copies of the profile frozen in their invoices.
     */
    async eraseNumber(tx: Executor, erasure: Erasure) {
      return {
        accounts: await accountsLifecycleRepo.clearProfilePhone(tx, erasure),
        balance_notifications: await accountsLifecycleRepo.clearAlertPhone(tx, erasure, clock.now()),
        alert_jobs: await accountsLifecycleRepo.deleteJobsTo(tx, erasure),
        invoices: await accountsLifecycleRepo.clearInvoicePhone(tx, erasure),
      };
    },

    /** GET /sub-accounts/:id: one direct sub-account of the caller (-5 for any other account). */
    async subAccount(auth: AuthContext, rawId: string) {
      const id = idIn(rawId);
      const row = id === undefined ? undefined : await accountsRepo.child(db, auth.accountId, id);
      if (!row) throw notASubAccount(rawId);
      return subAccountView(row);
    },

    /** GET /account/:id/lock: its tokens and credentials answer -1, its queued messages wait. */
    lock: (auth: AuthContext, rawId: string) => setLock(auth, rawId, 1),

    /** GET /account/:id/unlock: it works again, and its held messages are queued as they were. */
    unlock: (auth: AuthContext, rawId: string) => setLock(auth, rawId, 0),

    /**
     * POST /account/transfer: moves credits from the caller to one of its sub-accounts (negative: back), one
     * ledger line on each side naming the other, in one transaction. Each balance moves by a conditional
     * UPDATE that refuses to go below zero (the debit's), so concurrent transfers and sends lose nothing; the
     * caller's row is always updated first, so two transfers never wait on each other crosswise.
     */
    async transfer(auth: AuthContext, input: TransferRequest) {
      const raw = String(input.credits ?? '').trim();
      if (!/^-?\d{1,15}$/.test(raw) || Number(raw) === 0) {
        throw ApiError.data(
          `transfer.credits "${input.credits}" must be a non-zero whole number of credits (negative takes them back)`,
        );
      }
      const amount = Number(raw);
      const childId = idIn(input.to_account);
      return db.transaction().execute(async (tx) => {
        const child = childId === undefined ? undefined : await accountsRepo.find(tx, childId);
        if (!child || child.parent_id === null || Number(child.parent_id) !== auth.accountId) {
          throw notASubAccount(input.to_account);
        }
        const toChild = childId!;
        if (Number(child.unlimited) === 1) {
          throw ApiError.data(
            `transfer.to_account ${toChild} is an unlimited sub-account: it spends this account's credits, so none are transferred to or from it`,
          );
        }
        const parentBalance = await creditsRepo.addCredits(tx, auth.accountId, -amount);
        if (parentBalance === undefined) {
          const available = (await accountsRepo.find(tx, auth.accountId))?.credits ?? 0;
          throw new ApiError(
            Status.credits,
            `this transfer needs ${amount} credits and ${available} are available`,
          );
        }
        const childBalance = await creditsRepo.addCredits(tx, toChild, amount);
        if (childBalance === undefined) {
          const has = (await accountsRepo.find(tx, toChild))?.credits ?? 0;
          throw new ApiError(
            Status.credits,
            `sub-account ${toChild} has ${has} credits: ${-amount} cannot be taken back`,
          );
        }
        const now = clock.now();
        const sides = [
          { id: auth.accountId, delta: -amount, balance: parentBalance, other: toChild },
          { id: toChild, delta: amount, balance: childBalance, other: auth.accountId },
        ];
        for (const side of sides) {
          const reason = `transfer ${side.delta < 0 ? 'to' : 'from'} account ${side.other}`;
          await creditsRepo.recordLedger(
            tx,
            {
              account_id: side.id,
              delta: side.delta,
              balance_after: side.balance,
              reason,
              campaign_id: null,
            },
            now,
          );
          // The side that gave alerts as a send would; the side that received re-arms above its trigger.
          if (side.delta < 0) await alertIfCrossed(tx, side.id, side.balance);
          else await alertsRepo.rearmIfAbove(tx, side.id, side.balance);
        }
        // The sub-account that received credits gets its invoice; taking them back issues none.
        if (amount > 0) await deps.invoices?.transferred(tx, toChild, amount, auth.accountId);
        return { credits: parentBalance, child_credits: childBalance };
      });
    },

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
      if (Number(row.locked) === 1) throw lockedAccount(row.account_id);
      if (row.last_used_at === null || now - row.last_used_at >= touchEveryMs) {
        await tokensRepo.touch(db, row.token_id, now);
        row.last_used_at = now;
      }
      return { accountId: row.account_id, tokenId: row.token_id, parentId: row.parent_id };
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
      if (Number(row.locked) === 1) throw lockedAccount(accountId);
      return { accountId, tokenId: 0, parentId };
    },

    /** A token for the caller, or for one of its direct sub-accounts (-5 for any other account). */
    async createToken(auth: AuthContext, request: TokenRequest, rawAccountId?: string) {
      let accountId = auth.accountId;
      if (rawAccountId !== undefined) {
        const forAccountId = idIn(rawAccountId);
        const target = forAccountId === undefined ? undefined : await accountsRepo.find(db, forAccountId);
        if (!target || (target.id !== auth.accountId && target.parent_id !== auth.accountId)) {
          throw ApiError.notFound(`account "${rawAccountId}" is not a sub-account of this account`);
        }
        accountId = target.id;
      }
      return issueToken(db, accountId, request);
    },

    async createTokenForCli(accountId: number, name: string) {
      if (!(await accountsRepo.find(db, accountId)))
        throw ApiError.notFound(`account ${accountId} does not exist`);
      return issueToken(db, accountId, { name });
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
      if (id === undefined || !(await tokensRepo.delete(db, auth.accountId, id))) {
        throw ApiError.notFound(`token "${rawId}" not found`);
      }
      knownTokens.clear();
      return idOut(id);
    },

    /** Credits available to the account (its parent's for an unlimited sub-account). */
    async credits(accountId: number): Promise<number> {
      const billed = await billedAccount(db, accountId);
      return (await accountsRepo.find(db, billed))!.credits;
    },

    /** GET /credits: the credits the caller can spend; Pigeon is prepaid only. */
    async creditsView(auth: AuthContext) {
      const row = await accountsRepo.find(db, auth.accountId);
      if (!row) throw ApiError.notFound(`account ${auth.accountId} does not exist`);
      return {
        credits: await spendable(row),
        postpaid: '0',
        unlimited: Number(row.unlimited) === 1 ? '1' : '0',
      };
    },

    /** `inTx` runs in the same transaction once the credits are added (a purchase's invoice). */
    async addCredits(
      accountId: number,
      amount: number,
      reason = 'top-up',
      inTx?: (tx: Executor) => Promise<void>,
    ): Promise<number> {
      if (!Number.isSafeInteger(amount) || amount === 0)
        throw ApiError.data('credits must be a non-zero integer');
      return db.transaction().execute(async (tx) => {
        if (!(await accountsRepo.find(tx, accountId)))
          throw ApiError.notFound(`account ${accountId} does not exist`);
        const balance = await creditsRepo.addCredits(tx, accountId, amount);
        if (balance === undefined) throw new ApiError(Status.credits, 'the balance cannot go below zero');
        await creditsRepo.recordLedger(
          tx,
          { account_id: accountId, delta: amount, balance_after: balance, reason, campaign_id: null },
          clock.now(),
        );
        // An operator's deduction alerts like a send would; a top-up above the trigger re-arms the alert.
        if (amount > 0) await alertsRepo.rearmIfAbove(tx, accountId, balance);
        else await alertIfCrossed(tx, accountId, balance);
        await inTx?.(tx);
        return balance;
      });
    },

    /**
     * Debits `cost` credits inside the caller's transaction, from the account that pays for `accountId`.
     * Throws -3 when the balance is short, -1 when `accountId` is locked; returns who paid and the balance
     * after.
     */
    /** `reason`: what the ledger line says the credits paid for (a campaign, or a number lookup). */
    async debit(
      tx: Executor,
      accountId: number,
      cost: number,
      campaignId: number | null,
      reason: 'campaign' | 'lookup' = 'campaign',
    ) {
      // A send authenticated just before its account was locked stops here, in its own transaction.
      const billedAccountId = await billedAccount(tx, accountId, true);
      const balance = await creditsRepo.addCredits(tx, billedAccountId, -cost);
      if (balance === undefined) {
        const available = (await accountsRepo.find(tx, billedAccountId))?.credits ?? 0;
        const what = reason === 'lookup' ? 'this lookup' : 'this send';
        throw new ApiError(Status.credits, `${what} costs ${cost} credits and ${available} are available`);
      }
      if (cost !== 0) {
        await creditsRepo.recordLedger(
          tx,
          {
            account_id: billedAccountId,
            delta: -cost,
            balance_after: balance,
            reason,
            campaign_id: campaignId,
          },
          clock.now(),
        );
        // A free debit moves no credits, so it cannot cross the trigger: the send path skips the statement.
        await alertIfCrossed(tx, billedAccountId, balance);
      }
      return { billedAccountId, credits: balance };
    },

    /** Gives back a campaign's cost to the account that paid it, inside the caller's transaction. */
    async refund(tx: Executor, billedAccountId: number, amount: number, campaignId: number): Promise<number> {
      const balance = await creditsRepo.addCredits(tx, billedAccountId, amount);
      if (balance === undefined)
        throw new ApiError(Status.unknown, `account ${billedAccountId} cannot be refunded`);
      if (amount !== 0) {
        await creditsRepo.recordLedger(
          tx,
          {
            account_id: billedAccountId,
            delta: amount,
            balance_after: balance,
            reason: 'refund',
            campaign_id: campaignId,
          },
          clock.now(),
        );
        await alertsRepo.rearmIfAbove(tx, billedAccountId, balance);
      }
      return balance;
    },

    async getNotification(auth: AuthContext): Promise<NotificationFields> {
      return (
        (await notificationRepo.find(db, auth.accountId)) ?? {
          alert_trigger: '0',
          alert_email: '0',
          alert_gsm: '0',
          email: '',
          phone_number: '',
        }
      );
    },

    /** Stores the fields given over the current ones; every value is kept and echoed as a string. */
    async putNotification(auth: AuthContext, input: Partial<Record<keyof NotificationFields, string>>) {
      const stored = await notificationRepo.find(db, auth.accountId);
      const current = stored ?? (await this.getNotification(auth));
      const next = { ...current };
      for (const key of Object.keys(current) as (keyof NotificationFields)[]) {
        if (input[key] !== undefined) next[key] = String(input[key]).trim();
      }
      if (!/^\d{1,15}$/.test(next.alert_trigger)) {
        throw ApiError.data('notification.alert_trigger must be a whole number of credits');
      }
      for (const key of ['alert_email', 'alert_gsm'] as const) {
        if (next[key] !== '0' && next[key] !== '1')
          throw ApiError.data(`notification.${key} must be "0" or "1"`);
      }
      if (next.email !== '' && !emailPattern.test(next.email)) {
        throw ApiError.data(`notification.email "${next.email}" is not a valid address`);
      }
      if (next.phone_number !== '' && !/^\d{6,15}$/.test(next.phone_number)) {
        throw ApiError.data('notification.phone_number must be digits with the country code first');
      }
      if (next.alert_email === '1' && next.email === '') {
        throw ApiError.data('notification.email is required when alert_email is "1"');
      }
      if (next.alert_gsm === '1' && next.phone_number === '') {
        throw ApiError.data('notification.phone_number is required when alert_gsm is "1"');
      }
      // A new trigger re-arms the alert, whatever the balance: the next debit at or below it alerts once. The
      // same trigger keeps its state, so re-saving an address does not repeat an alert already sent.
      const rearm = stored !== undefined && Number(stored.alert_trigger) !== Number(next.alert_trigger);
      await notificationRepo.upsert(db, auth.accountId, next, clock.now(), rearm);
      return next;
    },
  };
}
