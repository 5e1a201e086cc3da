// Credits: who pays for an account, the balance and its ledger, the debits and refunds of sends and lookups,
// transfers to sub-accounts, the operator's top-ups, and the balance-alert trigger a debit crosses.

import { balanceAlertPayload } from '../events/event-bodies.ts';
import type { AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError, Status } from '../shared/errors.ts';
import { idIn } from '../shared/ids.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { appendEvents } from '../store/outbox.ts';
import { isLocked, lockedAccount, notASubAccount } from './account-errors.ts';
import { accountsRepo } from './accounts.repo.ts';
import { alertsRepo, type NewAlertJob } from './alerts.repo.ts';
import { creditsRepo } from './credits.repo.ts';
import type { CreditsView, TransferView } from './credits.schemas.ts';

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

export type CreditsService = ReturnType<typeof createCreditsService>;

/** A -3's details: what was asked, and what the account has (a postpaid one: down to its credit limit). */
function shortOf(
  what: string,
  cost: number,
  account: { credits: number; credit_limit: number | null } | undefined,
): string {
  const credits = Number(account?.credits ?? 0);
  if (account?.credit_limit === null || account?.credit_limit === undefined) {
    return `${what} costs ${cost} credits and ${credits} are available`;
  }
  const limit = Number(account.credit_limit);
  return `${what} costs ${cost} credits and ${credits + limit} are available (balance ${credits}, postpaid down to -${limit})`;
}

export function createCreditsService(deps: {
  db: Db;
  clock: Clock;
  timezone: string;
  invoices?: TransferInvoices;
  /** The audit log: a transfer's and a top-up's entry, in their transaction. */
  audit: AuditTrail;
}) {
  const { db, clock, timezone, audit } = deps;

  // SMSFactor's `Y-m-d H:i:s` on the zone's wall clock, to the second, as the CLICKER event has it.
  const { wallTime } = zonedTime(timezone);

  /**
   * After credits went down to `balance`: if that is at or below the account's alert trigger and the
   * setting is armed, disarms it and writes the BALANCE_ALERT event and the e-mail and SMS the setting asks
   * for, all in the caller's transaction, so the alert exists exactly when the debit does.
   */
  async function alertIfCrossed(
    tx: Executor,
    accountId: number,
    balance: number,
    /** Debits written together: the balance right after the first of them that reached the trigger. */
    balanceAtCrossing: (trigger: number) => number = () => balance,
  ): Promise<boolean> {
    const setting = await alertsRepo.disarmIfCrossed(tx, accountId, balance);
    if (!setting) return false;
    const now = clock.now();
    const trigger = Number(setting.alert_trigger);
    const payload = balanceAlertPayload(balanceAtCrossing(trigger), trigger, wallTime(now));
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
    return true;
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
      if (refuseLocked && hops === 0 && isLocked(account.locked)) throw lockedAccount(id, account.locked);
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

  return {
    billedAccount,

    spendable,

    /** The ledger line of an account created with credits, in its creation's transaction. */
    async recordInitial(tx: Executor, accountId: number, credits: number, now: number): Promise<void> {
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
    },

    /**
     * POST /account/transfer: moves credits from the caller to one of its sub-accounts (negative: back), one
     * ledger line on each side naming the other, in one transaction. Each balance moves by a conditional
     * UPDATE that refuses to go below zero (the debit's), so concurrent transfers and sends lose nothing; the
     * caller's row is always updated first, so two transfers never wait on each other crosswise.
     */
    async transfer(auth: AuthContext, input: TransferRequest): Promise<TransferView> {
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
        await audit.record(tx, {
          accountId: auth.accountId,
          auth,
          action: 'credits.transfer',
          objectType: 'account',
          objectId: toChild,
        });
        return { credits: parentBalance, child_credits: childBalance };
      });
    },

    /** Credits available to the account (its parent's for an unlimited sub-account). */
    async credits(accountId: number): Promise<number> {
      const billed = await billedAccount(db, accountId);
      return (await accountsRepo.find(db, billed))!.credits;
    },

    /**
     * GET /credits: the caller's balance (its paying parent's for an unlimited sub-account), and whether that
     * account is postpaid, with its credit limit.
     */
    async creditsView(auth: AuthContext): Promise<CreditsView> {
      const row = await accountsRepo.find(db, auth.accountId);
      if (!row) throw ApiError.notFound(`account ${auth.accountId} does not exist`);
      const billed = await accountsRepo.find(db, await billedAccount(db, auth.accountId));
      const limit = billed!.credit_limit;
      return {
        credits: Number(billed!.credits),
        postpaid: limit === null ? '0' : '1',
        ...(limit !== null && { credit_limit: Number(limit) }),
        unlimited: Number(row.unlimited) === 1 ? '1' : '0',
      };
    },

    /**
     * A simulation's check: -3 (as the debit words it) unless the account's paying account could pay `cost`
     * now, down to its credit limit when postpaid; answers that account's balance.
     */
    async payable(accountId: number, cost: number): Promise<number> {
      const billed = (await accountsRepo.find(db, await billedAccount(db, accountId)))!;
      const credits = Number(billed.credits);
      if (credits + Number(billed.credit_limit ?? 0) < cost) {
        throw new ApiError(Status.credits, shortOf('this send', cost, billed));
      }
      return credits;
    },

    /**
     * `pigeon account postpaid ID --limit N`: the account's balance may go down to -N by sends and lookups
     * (never by a transfer or an operator's deduction); `--off` (null) makes it prepaid again, its balance
     * as it is (below zero, nothing more is debited until it is topped up above the cost).
     */
    async setPostpaid(accountId: number, limit: number | null) {
      if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) {
        throw ApiError.data(`--limit "${limit}" must be a whole number of credits, 0 or more`);
      }
      // Audited like every change of an account (the CLI's entry), in the change's transaction.
      await db.transaction().execute(async (tx) => {
        if (!(await creditsRepo.setCreditLimit(tx, accountId, limit))) {
          throw ApiError.notFound(`account ${accountId} does not exist`);
        }
        const entry = { accountId, action: 'account.postpaid', objectType: 'account', objectId: accountId };
        await audit.record(tx, entry);
      });
      const row = (await accountsRepo.find(db, accountId))!;
      return {
        account_id: String(accountId),
        postpaid: limit === null ? '0' : '1',
        credit_limit: limit,
        credits: Number(row.credits),
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
        await audit.record(tx, {
          accountId,
          action: 'credits.add',
          objectType: 'account',
          objectId: accountId,
        });
        return balance;
      });
    },

    /**
     * Debits `cost` credits inside the caller's transaction, from the account that pays for `accountId`.
     * Throws -3 when the balance is short, -1 when `accountId` is locked; returns who paid, the balance
     * after, and whether it crossed the alert trigger (a balance alert was written: its caller nudges once
     * committed).
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
      const balance = await creditsRepo.addCredits(tx, billedAccountId, -cost, true);
      if (balance === undefined) {
        const what = reason === 'lookup' ? 'this lookup' : 'this send';
        throw new ApiError(Status.credits, shortOf(what, cost, await accountsRepo.find(tx, billedAccountId)));
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
        const alerted = await alertIfCrossed(tx, billedAccountId, balance);
        return { billedAccountId, credits: balance, alerted };
      }
      return { billedAccountId, credits: balance, alerted: false };
    },

    /**
     * Who pays for each of the accounts of sends written together (`debitMany`), asked once per account; a
     * locked sender is a -1, as in `debit`.
     */
    async billedAccounts(tx: Executor, accountIds: Iterable<number>): Promise<Map<number, number>> {
      const billed = new Map<number, number>();
      for (const id of accountIds) {
        if (!billed.has(id)) billed.set(id, await billedAccount(tx, id, true));
      }
      return billed;
    },

    /**
     * Debits sends written together in one transaction (a group of small sends on PostgreSQL): one
     * statement per paying account, its conditional UPDATE with its ledger lines, in id order (two groups
     * never wait on each other crosswise), and each account's balance alert once. Answers the balance after
     * each debit, in the order given, as if they had been made one by one, and whether one crossed an alert
     * trigger (its caller nudges once committed); undefined when an account cannot pay
     * them all: the caller then rolls its transaction back and makes them one by one, which refuses exactly
     * the sends that cannot be paid. Call it last before the commit: the account's row stays locked until then.
     */
    async debitMany(
      tx: Executor,
      debits: readonly { billedAccountId: number; cost: number; campaignId: number }[],
    ): Promise<{ after: number[]; alerted: boolean } | undefined> {
      const totals = new Map<number, number>();
      for (const d of debits) totals.set(d.billedAccountId, (totals.get(d.billedAccountId) ?? 0) + d.cost);
      // Each account's lines in order, each with what the account's later lines of the group take off: the
      // balance after a line is the final balance plus that.
      const lines = new Map<
        number,
        { delta: number; after: number; reason: string; campaign_id: number }[]
      >();
      const after: number[] = new Array(debits.length);
      const left = new Map(totals);
      for (let i = 0; i < debits.length; i++) {
        const { billedAccountId, cost, campaignId } = debits[i];
        const rest = left.get(billedAccountId)! - cost;
        left.set(billedAccountId, rest);
        after[i] = rest;
        if (cost === 0) continue;
        const own = lines.get(billedAccountId);
        const line = { delta: -cost, after: rest, reason: 'campaign', campaign_id: campaignId };
        if (own) own.push(line);
        else lines.set(billedAccountId, [line]);
      }
      const now = clock.now();
      const finals = new Map<number, number>();
      for (const accountId of [...totals.keys()].sort((a, b) => a - b)) {
        const balance = await creditsRepo.debitWithLedger(
          tx,
          accountId,
          -totals.get(accountId)!,
          lines.get(accountId) ?? [],
          now,
        );
        if (balance === undefined) return undefined;
        finals.set(accountId, balance);
      }
      const crossings = new Map<number, number[]>();
      for (let i = 0; i < debits.length; i++) {
        const { billedAccountId, cost } = debits[i];
        after[i] += finals.get(billedAccountId)!;
        if (cost === 0) continue;
        const seen = crossings.get(billedAccountId);
        if (seen) seen.push(after[i]);
        else crossings.set(billedAccountId, [after[i]]);
      }
      let alerted = false;
      for (const [accountId, balances] of crossings) {
        const final = finals.get(accountId)!;
        const crossed = (trigger: number) => balances.find((b) => b <= trigger) ?? final;
        if (await alertIfCrossed(tx, accountId, final, crossed)) alerted = true;
      }
      return { after, alerted };
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
  };
}
