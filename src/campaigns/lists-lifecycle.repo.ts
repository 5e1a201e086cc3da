// SQL of erasing a phone number from the campaigns capability's lists: list contacts, the blacklist and the
// NPAI list. No rules here.
import type { Erasure } from '../shared/erasure.ts';
import type { Executor } from '../store/db.ts';

export const listsLifecycleRepo = {
  /** Deletes the number's rows of `table` in the erasure's accounts; how many went. */
  async deleteNumber(
    db: Executor,
    table: 'contacts' | 'blacklist' | 'npai',
    erasure: Erasure,
  ): Promise<number> {
    let query = db.deleteFrom(table).where('number', '=', erasure.number);
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    return Number((await query.executeTakeFirst()).numDeletedRows);
  },
};
