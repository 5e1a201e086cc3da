// SQL for the lookups table: each number looked up, with its answer, scoped by account.
import type { Insertable } from 'kysely';
import type { Executor } from '../store/db.ts';
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

  /** Deletes up to `limit` of the account's lookups made before `before`; returns how many (retention). */
  async purgeOlder(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    const result = await db
      .deleteFrom('lookups')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('lookups')
          .select('id')
          .where('account_id', '=', accountId)
          .where('created_at', '<', before)
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
