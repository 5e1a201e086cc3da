// SQL of balance alerts: the setting (`balance_notifications`) with its once-per-crossing flag, and the leased
// outbox of alert e-mails and SMS (`alert_jobs`). No rules here.
import { type Selectable, sql } from 'kysely';
import type { Executor } from '../store/db.ts';
import { claimsOf, leaseQueue } from '../store/lease-queue.ts';
import { runPrepared, slot } from '../store/prepared.ts';
import type { AlertJobsTable, BalanceNotificationsTable } from '../store/schema.ts';

/** What an alert needs of the setting whose trigger a debit crossed. */
const crossedColumns = ['alert_trigger', 'alert_email', 'alert_gsm', 'email', 'phone_number'] as const;

export type CrossedSetting = Pick<Selectable<BalanceNotificationsTable>, (typeof crossedColumns)[number]>;

export type NewAlertJob = Pick<Selectable<AlertJobsTable>, 'account_id' | 'recipient' | 'payload'> & {
  kind: 'email' | 'sms';
};

/** What the worker needs of a job it leased. */
const claimedColumns = [
  'id',
  'account_id',
  'kind',
  'recipient',
  'payload',
  'attempts',
  'created_at',
] as const;

export type ClaimedAlertJob = Pick<Selectable<AlertJobsTable>, (typeof claimedColumns)[number]>;

/** Pending jobs, due at `next_attempt_at`; a claim counts the attempt. */
const jobQueue = leaseQueue({
  table: 'alert_jobs',
  waiting: 'pending',
  leased: 'sending',
  dueColumn: 'next_attempt_at',
  leaseCountsAttempt: true,
});

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
          .returning(crossedColumns),
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

  /** Claims and releases of due jobs (see store/lease-queue.ts). */
  ...claimsOf(jobQueue, claimedColumns),

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

export type NotificationFields = Omit<BalanceNotificationsTable, 'account_id' | 'updated_at' | 'armed'>;

export const notificationRepo = {
  find(db: Executor, accountId: number) {
    return db
      .selectFrom('balance_notifications')
      .select(['alert_trigger', 'alert_email', 'alert_gsm', 'email', 'phone_number'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  },

  /** A new row starts armed; `rearm` arms an existing one again (otherwise its flag is left as it is). */
  async upsert(
    db: Executor,
    accountId: number,
    fields: NotificationFields,
    now: number,
    rearm: boolean,
  ): Promise<void> {
    await db
      .insertInto('balance_notifications')
      .values({ account_id: accountId, ...fields, updated_at: now })
      .onConflict((oc) =>
        oc.column('account_id').doUpdateSet({ ...fields, updated_at: now, ...(rearm ? { armed: 1 } : {}) }),
      )
      .execute();
  },
};
