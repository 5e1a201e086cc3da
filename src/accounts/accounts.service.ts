// Accounts and sub-accounts: their creation, their profile reads, their lock, and their part of an erasure.
import type { AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import type { Erasure } from '../shared/erasure.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { isLocked, lockedBy, notASubAccount } from './account-errors.ts';
import {
  type AccountRow,
  accountView,
  checkCredentials,
  parseSubAccount,
  type SubAccountInput,
} from './account-profile.ts';
import { accountsRepo, type NewAccount } from './accounts.repo.ts';
import { accountsLifecycleRepo } from './accounts-lifecycle.repo.ts';
import type { CreditsService } from './credits.service.ts';
import { hashPassword } from './secrets.ts';
import type { TokensService } from './tokens.service.ts';

/**
 * What a sub-account's lock does to its queued messages (they are delivery's: `src/deps.ts` wires this to
 * the delivery service). Both run inside the lock's or the unlock's transaction.
 */
export interface HeldMessages {
  /** Holds the account's queued messages: no worker takes them until they are released. */
  hold(tx: Executor, accountId: number): Promise<number>;
  /**
   * Queues the account's held messages again, due when they were; those already due spread over its SMS parts
   * per second when it has a pace (`partsPerSecond`, read by `paceOf` before the transaction; 0: none).
   */
  release(tx: Executor, accountId: number, partsPerSecond: number): Promise<number>;
  /** The account's pace (the limits room's, from memory): asked before an unlock's transaction. */
  paceOf?(accountId: number): Promise<number>;
  /** Told after an unlock committed released messages (a nudge to the delivery worker). */
  released?(): void;
}

/**
 * A new account's first user, its owner, with the account's e-mail and password hash (src/users: `src/deps.ts`
 * wires this to the users service), in the account's creation transaction; -7 when a user has the e-mail.
 */
export interface AccountOwners {
  create(tx: Executor, accountId: number, email: string, passwordHash: string): Promise<void>;
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

/** How many accounts the operator's list reads at a time. */
const operatorPageSize = 500;

export function createAccountsService(deps: {
  db: Db;
  clock: Clock;
  /** The zone of the operator's dates (`Y-m-d H:i:s`, as the API's). */
  timezone: string;
  heldMessages: HeldMessages;
  owners: AccountOwners;
  /** A new account's first token; a lock forgets the account's tokens kept in memory. */
  tokens: Pick<TokensService, 'issue' | 'forgetTokensOf'>;
  /** The credits an account object shows; a new account's first ledger line. */
  credits: Pick<CreditsService, 'spendable' | 'recordInitial'>;
  /** The audit log: creations, locks and unlocks, in their transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, heldMessages, tokens, audit } = deps;
  const { wallTime } = zonedTime(deps.timezone);

  const subAccountView = async (row: AccountRow & { credits: number; parent_id: number | null }) =>
    accountView(row, await deps.credits.spendable(row), 'null');

  const emailTaken = (email: string, prefix: string) =>
    ApiError.data(`${prefix}email ${email} is already used by an account`);

  /**
   * Inserts an account and its owner user, and runs `after` in its transaction. The e-mail is checked first; two creations with
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
        const id = await accountsRepo.insert(tx, account);
        // Its owner signs in to the console with the account's e-mail and password.
        await deps.owners.create(tx, id, account.email, account.password_hash);
        return after(tx, id);
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
    // Asked before the checks, which are the transaction's: an id that is not the caller's sub-account fails
    // there, with its own answer.
    const pace = locked ? 0 : ((await heldMessages.paceOf?.(id).catch(() => 0)) ?? 0);
    const moved = await db.transaction().execute(async (tx) => {
      if (!(await accountsRepo.setLocked(tx, auth.accountId, id, locked))) {
        // Already in that state, or not the caller's sub-account, or locked by the operator.
        const child = await accountsRepo.child(tx, auth.accountId, id);
        if (!child) throw notASubAccount(rawId);
        if (!locked && Number(child.locked) === lockedBy.operator) {
          throw ApiError.data(`account ${id} is locked by the operator: only the operator can unlock it`);
        }
      }
      await audit.record(tx, {
        accountId: auth.accountId,
        auth,
        action: locked ? 'account.lock' : 'account.unlock',
        objectType: 'account',
        objectId: id,
      });
      // Also when the state was already set: a message queued in a race with the lock is held now.
      return locked ? heldMessages.hold(tx, id) : heldMessages.release(tx, id, pace);
    });
    tokens.forgetTokensOf(id);
    if (!locked && moved > 0) heldMessages.released?.();
    return { state: locked ? 'locked' : 'unlocked' } as const;
  }

  /** An account as the operator's commands print it. */
  const operatorView = (row: Awaited<ReturnType<typeof accountsRepo.find>> & object) => ({
    account_id: idOut(row.id),
    parent_id: row.parent_id === null ? null : idOut(row.parent_id),
    email: row.email,
    company: row.company ?? '',
    credits: Number(row.credits),
    unlimited: Number(row.unlimited) === 1,
    state: isLocked(row.locked) ? 'locked' : 'active',
    locked_by: Number(row.locked) === lockedBy.operator ? 'operator' : isLocked(row.locked) ? 'parent' : null,
    created_at: wallTime(Number(row.created_at)),
  });

  async function existing(accountId: number) {
    const row = await accountsRepo.find(db, accountId);
    if (!row) throw ApiError.notFound(`account ${accountId} does not exist`);
    return row;
  }

  /**
   * The operator's lock or unlock of any account: as a parent's (its tokens, credentials and console answer -1,
   * its queued messages are held), but only the operator lifts it, and it lifts a parent's lock too.
   */
  async function setOperatorLock(accountId: number, locked: boolean) {
    await existing(accountId);
    const pace = locked ? 0 : ((await heldMessages.paceOf?.(accountId)) ?? 0);
    const { changed, moved } = await db.transaction().execute(async (tx) => {
      const changed = await accountsRepo.setLockedByOperator(tx, accountId, locked ? lockedBy.operator : 0);
      await audit.record(tx, {
        accountId,
        action: locked ? 'account.lock' : 'account.unlock',
        objectType: 'account',
        objectId: accountId,
      });
      // Also when the state was already set: a message queued in a race with the lock is held now.
      const moved = locked
        ? await heldMessages.hold(tx, accountId)
        : await heldMessages.release(tx, accountId, pace);
      return { changed, moved };
    });
    tokens.forgetTokensOf(accountId);
    if (!locked && moved > 0) heldMessages.released?.();
    return {
      account_id: idOut(accountId),
      state: locked ? 'locked' : 'unlocked',
      changed,
      ...(locked ? { held_messages: moved } : { released_messages: moved }),
    };
  }

  return {
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
        if (credits > 0) await deps.credits.recordInitial(tx, accountId, credits, now);
        const { token } = await tokens.issue(tx, accountId, { name: 'default' });
        await audit.record(tx, {
          accountId,
          action: 'account.create',
          objectType: 'account',
          objectId: accountId,
        });
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
      const id = await storeAccount(account, 'account.', async (tx, accountId) => {
        await audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'account.create',
          objectType: 'account',
          objectId: accountId,
        });
        return accountId;
      });
      return { id: idOut(id), active: 1 } as const;
    },

    /** GET /account: the caller's account object. */
    async account(auth: AuthContext) {
      const row = await accountsRepo.profile(db, auth.accountId);
      if (!row) throw ApiError.notFound(`account ${auth.accountId} does not exist`);
      return accountView(row, await deps.credits.spendable(row), 'text');
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

    /** The account's parent (null for a top account), or undefined when there is no such account. */
    async parentOf(accountId: number): Promise<number | null | undefined> {
      const row = await accountsRepo.find(db, accountId);
      if (!row) return undefined;
      return row.parent_id === null ? null : Number(row.parent_id);
    },

    /** An account's e-mail, read in the caller's transaction (the audit log names an account's own sign-in so). */
    async email(ex: Executor, accountId: number): Promise<string | null> {
      return (await accountsRepo.find(ex, accountId))?.email ?? null;
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

    /** `pigeon account list`: every account, by id, read a page at a time. */
    async *operatorList() {
      for (let after = 0; ; ) {
        const rows = await accountsRepo.page(db, after, operatorPageSize);
        for (const row of rows) yield operatorView(row);
        if (rows.length < operatorPageSize) return;
        after = Number(rows[rows.length - 1].id);
      }
    },

    /** `pigeon account show ID`: the account, with what its parent's reads show and its sub-accounts' count. */
    async operatorShow(accountId: number) {
      const row = await existing(accountId);
      const profile = await accountsRepo.profile(db, accountId);
      return {
        ...operatorView(row),
        spendable_credits: await deps.credits.spendable(row),
        postpaid: row.credit_limit === null ? '0' : '1',
        credit_limit: row.credit_limit === null ? null : Number(row.credit_limit),
        first_name: profile?.first_name ?? '',
        last_name: profile?.last_name ?? '',
        phone: profile?.phone ?? '',
        sender: profile?.sender ?? '',
        sub_accounts: await accountsRepo.childCount(db, accountId),
      };
    },

    /** `pigeon account lock ID`. */
    operatorLock: (accountId: number) => setOperatorLock(accountId, true),

    /** `pigeon account unlock ID`: lifts the operator's lock, or a parent's. */
    operatorUnlock: (accountId: number) => setOperatorLock(accountId, false),

    /** GET /account/:id/lock: its tokens and credentials answer -1, its queued messages wait. */
    lock: (auth: AuthContext, rawId: string) => setLock(auth, rawId, 1),

    /** GET /account/:id/unlock: it works again, and its held messages are queued as they were. */
    unlock: (auth: AuthContext, rawId: string) => setLock(auth, rawId, 0),
  };
}
