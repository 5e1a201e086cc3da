// SQL of the accounts capability's data lifecycle: pruning finished alert jobs, and erasing a phone number
// from profiles, balance notification settings, alert jobs and invoices' customer copies. No rules here.
import { sql } from 'kysely';
import { type Erasure, jsonValuePattern } from '../shared/erasure.ts';
import type { Executor } from '../store/db.ts';

export const accountsLifecycleRepo = {
  /**
   * Up to `limit` alert jobs that ended (sent, or failed for good) before `before`; how many went. The table
   * holds a handful of rows per balance alert, so reading it needs no index.
   */
  async pruneFinishedJobs(db: Executor, before: number, limit: number): Promise<number> {
    const result = await db
      .deleteFrom('alert_jobs')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('alert_jobs')
          .select('id')
          .where('state', 'in', ['sent', 'failed'])
          .where('updated_at', '<', before)
          .orderBy('id')
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Empties the profile phone of the erasure's accounts where it is the number; how many. */
  async clearProfilePhone(db: Executor, erasure: Erasure): Promise<number> {
    let query = db.updateTable('accounts').set({ phone: null }).where('phone', '=', erasure.number);
    if (erasure.accountIds) query = query.where('id', 'in', erasure.accountIds);
    return Number((await query.executeTakeFirst()).numUpdatedRows);
  },

  /** Takes the number out of balance notification settings, and their SMS alert with it; how many. */
  async clearAlertPhone(db: Executor, erasure: Erasure, now: number): Promise<number> {
    let query = db
      .updateTable('balance_notifications')
      .set({ phone_number: '', alert_gsm: '0', updated_at: now })
      .where('phone_number', '=', erasure.number);
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    return Number((await query.executeTakeFirst()).numUpdatedRows);
  },

  /** Deletes the alert jobs addressed to the number (SMS alerts), whatever their state; how many. */
  async deleteJobsTo(db: Executor, erasure: Erasure): Promise<number> {
    let query = db.deleteFrom('alert_jobs').where('recipient', '=', erasure.number);
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    return Number((await query.executeTakeFirst()).numDeletedRows);
  },

  /**
   * Empties the number where an invoice's frozen copy of its customer holds it (the profile's phone): the
   * invoice keeps its amounts, number, name and address, which the law asks of it; how many.
   */
  async clearInvoicePhone(db: Executor, erasure: Erasure): Promise<number> {
    let query = db
      .updateTable('invoices')
      .set({ customer: sql<string>`replace(${sql.ref('customer')}, ${`"${erasure.number}"`}, '""')` })
      .where('customer', 'like', jsonValuePattern(erasure.number));
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    return Number((await query.executeTakeFirst()).numUpdatedRows);
  },
};
