// The alert e-mails and SMS that balance crossings leave in `alert_jobs`: leased to a worker, each outcome
// recorded, failures retried with backoff until the alert is a day old.
import { backoffMs } from '../shared/backoff.ts';
import type { Clock } from '../shared/clock.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { accountsLifecycleRepo } from './accounts-lifecycle.repo.ts';
import { alertSmsText, parseAlert } from './alert-messages.ts';
import { alertsRepo, type ClaimedAlertJob } from './alerts.repo.ts';

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
}) {
  const { db, dialect, clock, alertSms, options } = deps;

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
  };
}

class LeaseLost extends Error {}
