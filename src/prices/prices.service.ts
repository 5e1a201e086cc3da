// Prices per destination: the operator's price lists (the instance's default and one per account, which its
// sub-accounts inherit), the table a send prices its recipients with, and what an account reads it pays.
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { readMemory } from '../shared/read-memory.ts';
import type { Db } from '../store/db.ts';
import {
  compilePriceTable,
  mergeEntries,
  type PriceEntry,
  type PriceTable,
  parsePriceList,
  pricesByCountry,
} from './price-table.ts';
import { pricesRepo } from './prices.repo.ts';

/** The account id of the instance's default list. */
const instanceList = 0;
/**
 * How long an account's price table is taken from memory before its lists are read again: a change made in
 * this process applies at once, one made by another (the CLI), within this time.
 */
const priceMemoryMs = 1_000;
const maxTablesInMemory = 10_000;
/** Sub-account chains are at most this deep (as the credits' paying account is looked for). */
const maxDepth = 16;

/** The accounts service's answer about an account's parent (wired in deps.ts). */
export interface AccountParents {
  /** The parent (null for a top account); undefined when the account does not exist. */
  parentOf(accountId: number): Promise<number | null | undefined>;
}

/** An account's effective prices: the merged table and whose lists made it, nearest first. */
export interface AccountPrices {
  table: PriceTable;
  /** The accounts whose own lists it merges, the account's first, then its parents'; `0` the instance's. */
  from: number[];
}

export type PricesService = ReturnType<typeof createPricesService>;

export function createPricesService(deps: { db: Db; clock: Clock; accounts: AccountParents }) {
  const { db, clock, accounts } = deps;

  async function read(accountId: number): Promise<AccountPrices> {
    const chain: number[] = [];
    for (let id: number | null = accountId; id !== null; ) {
      if (chain.length >= maxDepth) break;
      const parent: number | null | undefined = await accounts.parentOf(id);
      if (parent === undefined) throw ApiError.notFound(`account ${id} does not exist`);
      chain.push(id);
      id = parent;
    }
    // The instance's list first, then each parent's down to the account's: the nearer one replaces what it names.
    const levels: PriceEntry[][] = [];
    const from: number[] = [];
    for (const id of [instanceList, ...chain.reverse()]) {
      const entries = await pricesRepo.list(db, id);
      if (entries.length === 0) continue;
      levels.push(entries);
      from.unshift(id);
    }
    return { table: compilePriceTable(mergeEntries(levels)), from };
  }

  /** The account's prices, from memory when read lately; one read at a time per account. */
  const memory = readMemory({
    read,
    now: () => clock.now(),
    ttlMs: priceMemoryMs,
    maxKeys: maxTablesInMemory,
  });
  const pricesOf = (accountId: number): Promise<AccountPrices> => memory.get(accountId);

  async function needAccount(accountId: number): Promise<void> {
    if ((await accounts.parentOf(accountId)) === undefined) {
      throw ApiError.notFound(`account ${accountId} does not exist`);
    }
  }

  /** An operator's answer: the list of one account (or the instance's) and what it inherits. */
  async function shown(accountId: number | undefined) {
    if (accountId === undefined) {
      const own = await pricesRepo.list(db, instanceList);
      const table = compilePriceTable(mergeEntries([own]));
      return { account_id: null, own, inherited_from: [], effective: table.entries, default: table.fallback };
    }
    const { table, from } = await read(accountId);
    return {
      account_id: String(accountId) as string | null,
      own: await pricesRepo.list(db, accountId),
      inherited_from: from
        .filter((id) => id !== accountId)
        .map((id) => (id === instanceList ? 'instance' : String(id))),
      effective: table.entries,
      default: table.fallback,
    };
  }

  return {
    /** The table a send prices its recipients with (the sending account's, inherited or its own). */
    async tableFor(accountId: number): Promise<PriceTable> {
      return (await pricesOf(accountId)).table;
    },

    /** `pigeon prices set [--account ID] FILE.csv`: replaces the account's (or the instance's) list. */
    async set(accountId: number | undefined, csv: string) {
      const entries = parsePriceList(csv);
      if (accountId !== undefined) await needAccount(accountId);
      await db.transaction().execute((tx) => pricesRepo.replace(tx, accountId ?? instanceList, entries));
      memory.forget();
      return shown(accountId);
    },

    /** `pigeon prices show [--account ID]`. */
    async show(accountId: number | undefined) {
      if (accountId !== undefined) await needAccount(accountId);
      return shown(accountId);
    },

    /** `pigeon prices clear --account ID`: the account inherits again (the instance's list with no ID). */
    async clear(accountId: number | undefined) {
      if (accountId !== undefined) await needAccount(accountId);
      const removed = await pricesRepo.clear(db, accountId ?? instanceList);
      memory.forget();
      return { account_id: accountId === undefined ? null : String(accountId), removed };
    },

    /**
     * GET /account/prices: what one SMS part costs the caller per country (every country the numbering plan
     * knows), the finer prefixes that price some of their numbers otherwise, and the price of any other.
     */
    async accountPrices(auth: AuthContext) {
      const { table } = await pricesOf(auth.accountId);
      return {
        default: table.fallback,
        by_country: pricesByCountry(table),
        prefixes: table.entries
          .filter((e) => /^\d/.test(e.destination))
          .map((e) => ({ prefix: e.destination, credits: e.credits })),
      };
    },
  };
}
