// SQL for `prices`: the price lists of accounts and of the instance (account 0). No rules here.
import type { Executor } from '../store/db.ts';
import type { PriceEntry } from './price-table.ts';

export const pricesRepo = {
  /** The list of one account (0: the instance's), empty when it has none. */
  async list(db: Executor, accountId: number): Promise<PriceEntry[]> {
    const rows = await db
      .selectFrom('prices')
      .select(['destination', 'credits'])
      .where('account_id', '=', accountId)
      .orderBy('destination')
      .execute();
    return rows.map((r) => ({ destination: r.destination, credits: Number(r.credits) }));
  },

  /** Replaces the account's list with `entries`, in the caller's transaction. */
  async replace(db: Executor, accountId: number, entries: readonly PriceEntry[]): Promise<void> {
    await pricesRepo.clear(db, accountId);
    for (let i = 0; i < entries.length; i += 1000) {
      await db
        .insertInto('prices')
        .values(
          entries
            .slice(i, i + 1000)
            .map((e) => ({ account_id: accountId, destination: e.destination, credits: e.credits })),
        )
        .execute();
    }
  },

  /** Removes the account's list; answers how many entries it had. */
  async clear(db: Executor, accountId: number): Promise<number> {
    const result = await db.deleteFrom('prices').where('account_id', '=', accountId).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
