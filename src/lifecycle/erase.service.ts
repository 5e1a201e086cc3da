// Erasing a phone number (GDPR): `pigeon erase NUMBER [--account ID]` and POST /erase. Each capability erases
// the number from its own tables through its service, all inside one transaction: the erasure happens whole
// or not at all, and its report says what each kind lost.
import type { AuditTrail } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import type { ErasedCounts, Erasure } from '../shared/erasure.ts';
import { ApiError } from '../shared/errors.ts';
import { idOut } from '../shared/ids.ts';
import { normalizeNumber } from '../sms/numbers.ts';
import type { Db, Executor } from '../store/db.ts';
import { erasedKinds } from './erase.schemas.ts';

/** What a message sent to an erased number keeps for recipient: fixed, so it tells nothing of the number. */
export const erasedPlaceholder = 'erased';

export type ErasedKind = (typeof erasedKinds)[number];

/** What the erasure needs of each capability (their services, wired in deps.ts). */
export interface ErasePorts {
  accounts: {
    erasureAccounts(auth: AuthContext): Promise<number[]>;
    exists(accountId: number): Promise<boolean>;
    eraseNumber(tx: Executor, erasure: Erasure): Promise<ErasedCounts>;
  };
  delivery: {
    eraseNumber(
      tx: Executor,
      erasure: Erasure,
    ): Promise<{ counts: ErasedCounts; messages: { campaign_id: number; seq: number }[] }>;
  };
  links: {
    eraseRecipients(
      tx: Executor,
      messages: readonly { campaign_id: number; seq: number }[],
    ): Promise<ErasedCounts>;
  };
  lists: { eraseNumber(tx: Executor, erasure: Erasure): Promise<ErasedCounts> };
  lookup: { eraseNumber(tx: Executor, erasure: Erasure): Promise<ErasedCounts> };
  webhooks: { eraseNumber(tx: Executor, erasure: Erasure): Promise<ErasedCounts> };
  /** The SMPP server's receipts and replies waiting for a bind. */
  smpp: { eraseNumber(tx: Executor, erasure: Erasure): Promise<ErasedCounts> };
}

export interface ErasureReport<Accounts = string[]> {
  /** The number erased, normalized. */
  number: string;
  /** The accounts it was erased from (ids), or `all`. */
  accounts: Accounts;
  /** Rows deleted or overwritten, per kind (see README.md for which are which). */
  removed: Record<ErasedKind, number>;
}

export type EraseService = ReturnType<typeof createEraseService>;

/** The number as sends take it: a string or an integer, with spaces, a leading `+` or `00` tolerated. */
function numberIn(value: unknown, field: string): string {
  if (value === undefined || value === null || value === '') throw ApiError.data(`${field} is required`);
  const raw = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  const number = raw === undefined ? undefined : normalizeNumber(raw);
  if (number === undefined) {
    const shown = raw ?? JSON.stringify(value);
    throw ApiError.data(
      `${field} "${shown.slice(0, 40)}" must be a phone number: 6 to 15 digits, country code first (33612345678), a leading + or 00 allowed`,
    );
  }
  return number;
}

export function createEraseService(deps: {
  db: Db;
  ports: ErasePorts;
  /**
   * Run once the erasure committed: the store's `truncateLog`, so the SQLite WAL keeps no earlier version of
   * the erased rows.
   */
  truncateLog: () => Promise<boolean>;
  /**
   * The audit log: an erasure's entry, in its transaction, for each account it covered (all: none is named).
   * The number is not written in it: the log must not keep what was erased.
   */
  audit: AuditTrail;
}) {
  const { db, ports, truncateLog, audit } = deps;

  async function erase(
    number: string,
    accountIds: readonly number[] | undefined,
    auth?: AuthContext,
  ): Promise<ErasureReport<string[] | 'all'>> {
    const erasure: Erasure = { number, accountIds, placeholder: erasedPlaceholder };
    const counts = await db.transaction().execute(async (tx) => {
      // Messages first: their links are found by the (campaign, position) of the messages to the number.
      const sent = await ports.delivery.eraseNumber(tx, erasure);
      const erased = {
        ...sent.counts,
        ...(await ports.links.eraseRecipients(tx, sent.messages)),
        ...(await ports.lists.eraseNumber(tx, erasure)),
        ...(await ports.lookup.eraseNumber(tx, erasure)),
        ...(await ports.webhooks.eraseNumber(tx, erasure)),
        ...(await ports.smpp.eraseNumber(tx, erasure)),
        ...(await ports.accounts.eraseNumber(tx, erasure)),
      };
      await audit.recordMany(
        tx,
        (accountIds ?? []).map((accountId) => ({
          accountId,
          auth,
          action: 'number.erase',
          objectType: 'number',
        })),
      );
      return erased;
    });
    await truncateLog();
    const removed = Object.fromEntries(erasedKinds.map((kind) => [kind, counts[kind] ?? 0])) as Record<
      ErasedKind,
      number
    >;
    return { number, accounts: accountIds ? accountIds.map(idOut) : 'all', removed };
  }

  return {
    /** POST /erase: the number leaves the caller's account and its direct sub-accounts. */
    async eraseForAccount(
      auth: AuthContext,
      input: { number?: unknown } | undefined,
    ): Promise<ErasureReport> {
      const number = numberIn(input?.number, 'erase.number');
      const accountIds = await ports.accounts.erasureAccounts(auth);
      const { removed } = await erase(number, accountIds, auth);
      return { number, accounts: accountIds.map(idOut), removed };
    },

    /** `pigeon erase NUMBER [--account ID]`: from one account, or from every account. */
    async eraseForOperator(rawNumber: string, accountId?: number): Promise<ErasureReport<string[] | 'all'>> {
      const number = numberIn(rawNumber, 'NUMBER');
      if (accountId !== undefined && !(await ports.accounts.exists(accountId))) {
        throw ApiError.notFound(`account ${accountId} does not exist`);
      }
      return erase(number, accountId === undefined ? undefined : [accountId]);
    },
  };
}
