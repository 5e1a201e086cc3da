// Accounts, sub-accounts, credits, authentication, tokens and the balance notification setting.
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { appendEvents } from '../store/outbox.ts';
import {
  accountsRepo,
  type NotificationFields,
  notificationRepo,
  type TokenOwner,
  tokensRepo,
} from './accounts.repo.ts';
import { type BalanceAlert, serializeAlert } from './alert-messages.ts';
import { alertsRepo, type NewAlertJob } from './alerts.repo.ts';
import { hashPassword, hashToken, ipAllowed, isIpOrCidr, newToken } from './secrets.ts';

export interface TokenRequest {
  name: string;
  ttl?: number;
  allowed_ips?: string[] | string;
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
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const maxTokenNameLength = 100;

export type AccountsService = ReturnType<typeof createAccountsService>;

export function createAccountsService(deps: { db: Db; clock: Clock; timezone: string }) {
  const { db, clock, timezone } = deps;

  // Whole seconds with the zone's offset, as the DLR and MO events have it.
  const { isoSecond } = zonedTime(timezone);

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

  /** The account whose credits an account spends: itself, or up its parents while they are unlimited. */
  async function billedAccount(ex: Executor, accountId: number): Promise<number> {
    let id = accountId;
    for (let hops = 0; hops < 16; hops++) {
      const account = await accountsRepo.find(ex, id);
      if (!account) throw ApiError.notFound(`account ${id} does not exist`);
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
    if (request.ttl !== undefined && (!Number.isInteger(request.ttl) || request.ttl <= 0)) {
      throw ApiError.data('token.ttl must be a positive number of seconds');
    }
    const allowed = normalizeAllowedIps(request.allowed_ips);
    const token = newToken();
    const now = clock.now();
    const id = await tokensRepo.insert(
      ex,
      {
        account_id: accountId,
        name,
        token_hash: hashToken(token),
        expires_at: request.ttl ? now + request.ttl * 1000 : null,
        allowed_ips: allowed ? JSON.stringify(allowed) : null,
      },
      now,
    );
    return { token, token_id: idOut(id) };
  }

  const tokenView = (row: NonNullable<Awaited<ReturnType<typeof tokensRepo.find>>>) => ({
    token_id: idOut(row.id),
    name: row.name,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
    allowed_ips: row.allowed_ips ? (JSON.parse(row.allowed_ips) as string[]) : [],
    last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
  });

  return {
    billedAccount,

    async createAccount(request: NewAccountRequest): Promise<{ account_id: string; token: string }> {
      const email = request.email.trim().toLowerCase();
      if (!emailPattern.test(email)) throw ApiError.data(`email "${request.email}" is not a valid address`);
      if (request.password.length < 8) throw ApiError.data('password must have at least 8 characters');
      const credits = request.credits ?? 0;
      if (!Number.isSafeInteger(credits) || credits < 0)
        throw ApiError.data('credits must be a non-negative integer');
      const passwordHash = await hashPassword(request.password);
      return db.transaction().execute(async (tx) => {
        if (request.parentId !== undefined && !(await accountsRepo.find(tx, request.parentId))) {
          throw ApiError.notFound(`parent account ${request.parentId} does not exist`);
        }
        if (await accountsRepo.findByEmail(tx, email))
          throw ApiError.data(`an account with email ${email} exists`);
        const now = clock.now();
        const accountId = await accountsRepo.insert(tx, {
          parent_id: request.parentId ?? null,
          email,
          password_hash: passwordHash,
          first_name: request.firstName ?? null,
          last_name: request.lastName ?? null,
          company: request.company ?? null,
          credits,
          unlimited: request.unlimited ? 1 : 0,
          created_at: now,
        });
        if (credits > 0) {
          await accountsRepo.recordLedger(
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

    /** Resolves an Authorization value (`Bearer x` or bare `x`) to its account; -1 for anything else. */
    async authenticate(credential: string | undefined, clientIp: string): Promise<AuthContext> {
      const raw = (credential ?? '').trim().replace(/^Bearer\s+/i, '');
      if (raw === '') throw ApiError.auth('missing API token: send "Authorization: Bearer <token>"');
      const now = clock.now();
      const row = await tokenOwner(hashToken(raw), now);
      if (!row) throw ApiError.auth('unknown or revoked API token');
      if (row.expires_at !== null && row.expires_at <= now) throw ApiError.auth('API token has expired');
      if (row.allowed_ips && !ipAllowed(clientIp, JSON.parse(row.allowed_ips) as string[])) {
        throw ApiError.auth(`API token is not allowed from ${clientIp}`);
      }
      if (row.last_used_at === null || now - row.last_used_at >= touchEveryMs) {
        await tokensRepo.touch(db, row.token_id, now);
        row.last_used_at = now;
      }
      return { accountId: row.account_id, tokenId: row.token_id, parentId: row.parent_id };
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
      return (await tokensRepo.list(db, auth.accountId)).map(tokenView);
    },

    async getToken(auth: AuthContext, rawId: string) {
      const id = idIn(rawId);
      const row = id === undefined ? undefined : await tokensRepo.find(db, auth.accountId, id);
      if (!row) throw ApiError.notFound(`token "${rawId}" not found`);
      return tokenView(row);
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

    async addCredits(accountId: number, amount: number, reason = 'top-up'): Promise<number> {
      if (!Number.isSafeInteger(amount) || amount === 0)
        throw ApiError.data('credits must be a non-zero integer');
      return db.transaction().execute(async (tx) => {
        if (!(await accountsRepo.find(tx, accountId)))
          throw ApiError.notFound(`account ${accountId} does not exist`);
        const balance = await accountsRepo.addCredits(tx, accountId, amount);
        if (balance === undefined) throw new ApiError(Status.credits, 'the balance cannot go below zero');
        await accountsRepo.recordLedger(
          tx,
          { account_id: accountId, delta: amount, balance_after: balance, reason, campaign_id: null },
          clock.now(),
        );
        // An operator's deduction alerts like a send would; a top-up above the trigger re-arms the alert.
        if (amount > 0) await alertsRepo.rearmIfAbove(tx, accountId, balance);
        else await alertIfCrossed(tx, accountId, balance);
        return balance;
      });
    },

    /**
     * Debits `cost` credits inside the caller's transaction, from the account that pays for `accountId`.
     * Throws -3 when the balance is short; returns who paid and the balance after.
     */
    async debit(tx: Executor, accountId: number, cost: number, campaignId: number | null) {
      const billedAccountId = await billedAccount(tx, accountId);
      const balance = await accountsRepo.addCredits(tx, billedAccountId, -cost);
      if (balance === undefined) {
        const available = (await accountsRepo.find(tx, billedAccountId))?.credits ?? 0;
        throw new ApiError(Status.credits, `this send costs ${cost} credits and ${available} are available`);
      }
      if (cost !== 0) {
        await accountsRepo.recordLedger(
          tx,
          {
            account_id: billedAccountId,
            delta: -cost,
            balance_after: balance,
            reason: 'campaign',
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
      const balance = await accountsRepo.addCredits(tx, billedAccountId, amount);
      if (balance === undefined)
        throw new ApiError(Status.unknown, `account ${billedAccountId} cannot be refunded`);
      if (amount !== 0) {
        await accountsRepo.recordLedger(
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
