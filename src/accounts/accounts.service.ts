// Accounts, sub-accounts, credits and the balance notification setting.
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import type { Erasure } from '../shared/erasure.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { appendEvents } from '../store/outbox.ts';
import { lockedAccount, notASubAccount } from './account-errors.ts';
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
import { hashPassword } from './secrets.ts';
import type { TokensService } from './tokens.service.ts';

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

export type AccountsService = ReturnType<typeof createAccountsService>;

export function createAccountsService(deps: {
  db: Db;
  clock: Clock;
  timezone: string;
  heldMessages: HeldMessages;
  invoices?: TransferInvoices;
  /** A new account's first token; a lock forgets the account's tokens kept in memory. */
  tokens: Pick<TokensService, 'issue' | 'forgetTokensOf'>;
}) {
  const { db, clock, timezone, heldMessages, tokens } = deps;

  // Whole seconds with the zone's offset, as the DLR and MO events have it.
  const { isoSecond } = zonedTime(timezone);

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
    tokens.forgetTokensOf(id);
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
        const { token } = await tokens.issue(tx, accountId, { name: 'default' });
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
