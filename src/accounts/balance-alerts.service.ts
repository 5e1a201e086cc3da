// Balance alerts: the setting that asks for them (GET/PUT /notification/balance), and the alert e-mails and SMS
// that balance crossings leave in `alert_jobs`: leased to a worker, each outcome recorded, failures retried
// with backoff until the alert is a day old. The crossing itself is found by the debit (`credits.service.ts`).
import { type AuditTrail, withEntry } from '../shared/audit-trail.ts';
import type { AuthContext } from '../shared/auth-context.ts';
import { backoffMs } from '../shared/backoff.ts';
import type { Clock } from '../shared/clock.ts';
import { emailPattern } from '../shared/email-address.ts';
import { ApiError } from '../shared/errors.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { accountsLifecycleRepo } from './accounts-lifecycle.repo.ts';
import { alertSmsText, parseAlert } from './alert-messages.ts';
import {
  alertsRepo,
  type ClaimedAlertJob,
  type NotificationFields,
  notificationRepo,
} from './alerts.repo.ts';
import type { NotificationView } from './balance-alerts.schemas.ts';

/**
 * Where an alert SMS is queued (a free message the delivery worker sends like any other), inside the
 * caller's transaction. Declared here, wired in deps.ts: accounts reaches no other capability itself.
 */
export interface AlertSms {
  queue(tx: Executor, accountId: number, number: string, text: string, sender: string): Promise<unknown>;
}

export interface BalanceAlertsOptions {
  /** The sender of the free alert SMS. */
  sender: string;
  /** How long a worker holds a job: longer than one SMTP exchange with its timeouts. */
  leaseMs: number;
  /** The wait after the first failure, doubled after each one up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** A job still failing this long after its alert is given up. */
  giveUpAfterMs: number;
}

export type BalanceAlertsService = ReturnType<typeof createBalanceAlertsService>;

export type AlertJobOutcome =
  | { kind: 'sent' }
  /** `permanent`: retrying would get the same answer (an SMTP 5xx, no SMTP configured). */
  | { kind: 'failed'; error: string; permanent: boolean };

export function createBalanceAlertsService(deps: {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  alertSms: AlertSms;
  options: BalanceAlertsOptions;
  /** The audit log: a change of the notification setting, in its transaction. */
  audit: AuditTrail;
}) {
  const { db, dialect, clock, alertSms, options, audit } = deps;

  return {
    claim(limit: number): Promise<ClaimedAlertJob[]> {
      return alertsRepo.claimDue(db, dialect, clock.now(), options.leaseMs, limit);
    },

    releaseExpiredLeases(): Promise<number> {
      return alertsRepo.releaseExpiredLeases(db, clock.now());
    },

    /** Pruning: up to `limit` jobs that ended (sent, or failed for good) before `before`; how many went. */
    pruneFinishedJobs(before: number, limit: number): Promise<number> {
      return accountsLifecycleRepo.pruneFinishedJobs(db, before, limit);
    },

    /**
     * Queues a claimed SMS job's message and marks the job sent in one transaction, so the SMS is queued
     * exactly once even if two workers end up with the job. Answers false when the lease was lost.
     */
    async queueSms(job: ClaimedAlertJob): Promise<boolean> {
      const text = alertSmsText(parseAlert(job.payload));
      try {
        return await db.transaction().execute(async (tx) => {
          await alertSms.queue(tx, job.account_id, job.recipient, text, options.sender);
          const held = await alertsRepo.finish(
            tx,
            job.id,
            job.attempts,
            { state: 'sent', error: null },
            clock.now(),
          );
          if (!held) throw new LeaseLost();
          return true;
        });
      } catch (error) {
        if (error instanceof LeaseLost) return false;
        throw error;
      }
    },

    /**
     * Records the outcome of a claimed job's attempt: sent, failed for good, or due again after a backoff while
     * the alert is less than `giveUpAfterMs` old. Answers the state it left the job in, or undefined when the
     * lease was lost to another worker.
     */
    async record(
      job: ClaimedAlertJob,
      outcome: AlertJobOutcome,
    ): Promise<'sent' | 'failed' | 'pending' | undefined> {
      const now = clock.now();
      if (outcome.kind === 'sent') {
        return (await alertsRepo.finish(db, job.id, job.attempts, { state: 'sent', error: null }, now))
          ? 'sent'
          : undefined;
      }
      const nextAttemptAt = now + backoffMs(job.attempts, options.retryBaseMs, options.retryMaxMs);
      const giveUp = outcome.permanent || nextAttemptAt > job.created_at + options.giveUpAfterMs;
      const state = giveUp ? 'failed' : 'pending';
      const held = await alertsRepo.finish(
        db,
        job.id,
        job.attempts,
        giveUp ? { state, error: outcome.error } : { state, error: outcome.error, nextAttemptAt },
        now,
      );
      return held ? state : undefined;
    },

    /** An account's alert jobs, newest first. */
    jobsOf(accountId: number) {
      return alertsRepo.jobsOf(db, accountId);
    },

    /** GET /notification/balance: the caller's setting; every alert off until one is stored. */
    async getNotification(auth: AuthContext): Promise<NotificationView> {
      return (
        (await notificationRepo.find(db, auth.accountId)) ?? {
          alert_trigger: '0',
          alert_email: '0',
          alert_gsm: '0',
          email: '',
          phone_number: '',
        }
      );
    },

    /** Stores the fields given over the current ones; every value is kept and echoed as a string. */
    async putNotification(auth: AuthContext, input: Partial<Record<keyof NotificationFields, string>>) {
      const stored = await notificationRepo.find(db, auth.accountId);
      const current = stored ?? (await this.getNotification(auth));
      const next = { ...current };
      for (const key of Object.keys(current) as (keyof NotificationFields)[]) {
        if (input[key] !== undefined) next[key] = String(input[key]).trim();
      }
      if (!/^\d{1,15}$/.test(next.alert_trigger)) {
        throw ApiError.data('notification.alert_trigger must be a whole number of credits');
      }
      for (const key of ['alert_email', 'alert_gsm'] as const) {
        if (next[key] !== '0' && next[key] !== '1')
          throw ApiError.data(`notification.${key} must be "0" or "1"`);
      }
      if (next.email !== '' && !emailPattern.test(next.email)) {
        throw ApiError.data(`notification.email "${next.email}" is not a valid address`);
      }
      if (next.phone_number !== '' && !/^\d{6,15}$/.test(next.phone_number)) {
        throw ApiError.data('notification.phone_number must be digits with the country code first');
      }
      if (next.alert_email === '1' && next.email === '') {
        throw ApiError.data('notification.email is required when alert_email is "1"');
      }
      if (next.alert_gsm === '1' && next.phone_number === '') {
        throw ApiError.data('notification.phone_number is required when alert_gsm is "1"');
      }
      // A new trigger re-arms the alert, whatever the balance: the next debit at or below it alerts once. The
      // same trigger keeps its state, so re-saving an address does not repeat an alert already sent.
      const rearm = stored !== undefined && Number(stored.alert_trigger) !== Number(next.alert_trigger);
      const entry = {
        accountId: auth.accountId,
        auth,
        action: 'notification.update',
        objectType: 'notification',
      };
      await withEntry(db, audit, entry, (tx) =>
        notificationRepo.upsert(tx, auth.accountId, next, clock.now(), rearm),
      );
      return next;
    },
  };
}

class LeaseLost extends Error {}
