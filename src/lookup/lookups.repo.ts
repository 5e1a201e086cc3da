// SQL for the lookups table: each number looked up, with its answer, scoped by account.
import type { Insertable } from 'kysely';
import type { Erasure } from '../shared/erasure.ts';
import type { Executor } from '../store/db.ts';
import { deleteAged } from '../store/purge.ts';
import type { LookupsTable } from '../store/schema.ts';

export const lookupsRepo = {
  async insert(db: Executor, rows: Insertable<LookupsTable>[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('lookups')
        .values(rows.slice(i, i + 500))
        .execute();
    }
  },

  /** Erasure: deletes the lookups of the number made by the erasure's accounts; how many. */
  async deleteNumber(db: Executor, erasure: Erasure): Promise<number> {
    let query = db.deleteFrom('lookups').where('number', '=', erasure.number);
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    return Number((await query.executeTakeFirst()).numDeletedRows);
  },

  /** Deletes up to `limit` of the account's lookups made before `before`; returns how many (retention). */
  purgeOlder(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    return deleteAged(
      db,
      { table: 'lookups', column: 'created_at', account: 'column' },
      accountId,
      before,
      limit,
    );
  },
};
