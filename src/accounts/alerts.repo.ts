// SQL of balance alerts: the once-per-crossing flag on the setting, the BALANCE_ALERT event, and the leased
// outbox of alert e-mails and SMS. No rules here.
import { sql } from 'kysely';
import type { DialectName, Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';

export interface CrossedSetting {
  alert_trigger: string;
  alert_email: string;
  alert_gsm: string;
  email: string;
  phone_number: string;
}

export interface NewAlertJob {
  account_id: number;
  kind: 'email' | 'sms';
  recipient: string;
  payload: string;
}

export interface ClaimedAlertJob {
  id: number;
  account_id: number;
  kind: string;
  recipient: string;
  payload: string;
  attempts: number;
  created_at: number;
}

// The trigger is stored as the digits the API echoes; the comparison reads it as a number.
const triggerCredits = sql<number>`cast(alert_trigger as bigint)`;

export const alertsRepo = {
  /**
   * Disarms the account's setting if it is armed and `balance` is at or below its trigger, returning the
   * setting; undefined otherwise. One statement on the primary key, on every debit, so compiled once. The
   * row lock it takes (and the debit's lock on the account before it) lets one crossing alert only once.
   */
  async disarmIfCrossed(
    db: Executor,
    accountId: number,
    balance: number,
  ): Promise<CrossedSetting | undefined> {
    const [row] = await runPrepared<CrossedSetting>(
      db,
      'alerts.disarmIfCrossed',
      (q) =>
        q
          .updateTable('balance_notifications')
          .set({ armed: sql.lit(0) })
          .where('account_id', '=', slot(0) as unknown as number)
          .where('armed', '=', sql.lit(1))
          .where(triggerCredits, '>=', slot(1) as unknown as number)
          .returning(['alert_trigger', 'alert_email', 'alert_gsm', 'email', 'phone_number']),
      [accountId, balance],
    );
    return row;
  },

  /** Arms the account's setting again if `balance` is above its trigger. */
  async rearmIfAbove(db: Executor, accountId: number, balance: number): Promise<void> {
    await db
      .updateTable('balance_notifications')
      .set({ armed: 1 })
      .where('account_id', '=', accountId)
      .where('armed', '=', 0)
      .where(triggerCredits, '<', balance)
      .execute();
  },

  async insertJobs(db: Executor, jobs: NewAlertJob[], now: number): Promise<void> {
    if (jobs.length === 0) return;
    await db
      .insertInto('alert_jobs')
      .values(
        jobs.map((job) => ({
          ...job,
          state: 'pending',
          attempts: 0,
          next_attempt_at: now,
          lease_until: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  },

  /**
   * Leases up to `limit` due jobs, oldest due first. On PostgreSQL concurrent workers skip each other's rows
   * (FOR UPDATE SKIP LOCKED); SQLite has one writer, so the single statement is already exclusive.
   */
  async claimDue(
    db: Executor,
    dialect: DialectName,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<ClaimedAlertJob[]> {
    let due = db
      .selectFrom('alert_jobs')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(limit);
    if (dialect === 'postgres') due = due.forUpdate().skipLocked();
    return db
      .updateTable('alert_jobs')
      .set((eb) => ({
        state: 'sending',
        lease_until: now + leaseMs,
        attempts: eb('attempts', '+', 1),
        updated_at: now,
      }))
      .where('id', 'in', due)
      .returning(['id', 'account_id', 'kind', 'recipient', 'payload', 'attempts', 'created_at'])
      .execute();
  },

  /** Jobs whose worker died mid-send are due again. */
  async releaseExpiredLeases(db: Executor, now: number): Promise<number> {
    const result = await db
      .updateTable('alert_jobs')
      .set({ state: 'pending', lease_until: null, updated_at: now })
      .where('state', '=', 'sending')
      .where('lease_until', '<', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /**
   * Ends the lease a worker holds on a job: to `sent` or `failed`, or back to `pending` at `nextAttemptAt`.
   * `attempts` is the count the worker claimed it with, so a worker whose lease expired and was taken by
   * another changes nothing; the answer says whether this worker still held it.
   */
  async finish(
    db: Executor,
    id: number,
    attempts: number,
    outcome: { state: 'sent' | 'failed' | 'pending'; error: string | null; nextAttemptAt?: number },
    now: number,
  ): Promise<boolean> {
    const result = await db
      .updateTable('alert_jobs')
      .set({
        state: outcome.state,
        last_error: outcome.error,
        lease_until: null,
        updated_at: now,
        ...(outcome.nextAttemptAt === undefined ? {} : { next_attempt_at: outcome.nextAttemptAt }),
      })
      .where('id', '=', id)
      .where('state', '=', 'sending')
      .where('attempts', '=', attempts)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** An account's jobs, newest first (for the operator and the tests). */
  jobsOf(db: Executor, accountId: number) {
    return db
      .selectFrom('alert_jobs')
      .select(['id', 'kind', 'recipient', 'payload', 'state', 'attempts', 'last_error', 'next_attempt_at'])
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .execute();
  },
};
