// SQL for the retention settings: one row per account that set one; no row keeps everything.
import type { Executor } from '../store/db.ts';
import type { RetentionTable } from '../store/schema.ts';
import type { RetentionSetting } from './retention-period.ts';

export type RetentionRow = Pick<RetentionTable, RetentionSetting>;

const columns = ['message', 'list', 'campaign', 'mo', 'lookup', 'survey'] as const;
/** The settings that delete something: `survey` has nothing to delete in Pigeon. */
const purged = ['message', 'list', 'campaign', 'mo', 'lookup'] as const;

export const retentionRepo = {
  find(db: Executor, accountId: number): Promise<RetentionRow | undefined> {
    return db.selectFrom('retention').select(columns).where('account_id', '=', accountId).executeTakeFirst();
  },

  async save(db: Executor, accountId: number, row: RetentionRow, now: number): Promise<void> {
    await db
      .insertInto('retention')
      .values({ account_id: accountId, ...row, updated_at: now })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ ...row, updated_at: now }))
      .execute();
  },

  /** Accounts after `afterId` that delete something, in id order, `limit` at a time. */
  withLimits(db: Executor, afterId: number, limit: number) {
    return db
      .selectFrom('retention')
      .select(['account_id', ...columns])
      .where('account_id', '>', afterId)
      .where((eb) => eb.or(purged.map((c) => eb(c, '!=', '-1'))))
      .orderBy('account_id')
      .limit(limit)
      .execute();
  },
};
