// The alert worker: leases due balance-alert jobs, sends each e-mail through SMTP or queues each free SMS,
// and records every outcome before it leases more. Runs where the other workers run (ROLE all or worker).

import type { Config } from '../config.ts';
import type { Log } from '../shared/log.ts';
import { createPollLoop } from '../shared/poll-loop.ts';
import { alertEmail, parseAlert } from './alert-messages.ts';
import type { ClaimedAlertJob } from './alerts.repo.ts';
import type {
  AlertJobOutcome,
  BalanceAlertsOptions,
  BalanceAlertsService,
} from './balance-alerts.service.ts';
import { MailError, type Mailer } from './mailer.ts';

export interface AlertWorkerOptions {
  pollMs: number;
  batchSize: number;
  /** How often to release the leases of jobs whose worker stopped mid-send. */
  sweepMs: number;
}

/** The worker's rounds: every WORKER_POLL_MS when idle, ten jobs at a time, lost leases given back every 5 s. */
export const alertWorkerOptions = (config: Pick<Config, 'WORKER_POLL_MS'>): AlertWorkerOptions => ({
  pollMs: config.WORKER_POLL_MS,
  batchSize: 10,
  sweepMs: 5000,
});

/** How long the worker holds a job, and when a failed one is tried again (the service leases and records). */
export const alertJobTiming = {
  // A row lease, not renewed by a heartbeat: long enough for one SMTP conversation (LEASE_SECONDS,
  // now a heartbeat lease of seconds, used to be this).
  leaseMs: 120_000,
  retryBaseMs: 30_000,
  retryMaxMs: 3_600_000,
  giveUpAfterMs: 86_400_000,
} satisfies Omit<BalanceAlertsOptions, 'sender'>;

export type AlertWorker = ReturnType<typeof createAlertWorker>;

/** Said on every e-mail job when SMTP_URL is unset: the alert is recorded as failed, never as sent. */
export const noSmtpReason = 'SMTP_URL is not set: balance alert e-mails cannot be sent';

export function createAlertWorker(deps: {
  alerts: BalanceAlertsService;
  /** Undefined when no SMTP server is configured. */
  mailer: Mailer | undefined;
  log: Log;
  options: AlertWorkerOptions;
  /** Told of each job's outcome, for the operator's metrics (src/ops). */
  metrics?: { ran(kind: string, outcome: 'sent' | 'retry' | 'failed'): void };
  /** Told after an alert SMS was queued (committed): a nudge to the delivery worker. */
  queued?: () => void;
}) {
  const { alerts, mailer, log, options, metrics } = deps;

  async function sendEmail(job: ClaimedAlertJob): Promise<AlertJobOutcome> {
    if (!mailer) return { kind: 'failed', error: noSmtpReason, permanent: true };
    try {
      await mailer.send({ to: job.recipient, ...alertEmail(parseAlert(job.payload), job.account_id) });
      return { kind: 'sent' };
    } catch (error) {
      const permanent = error instanceof MailError && error.permanent;
      return { kind: 'failed', error: (error as Error).message, permanent };
    }
  }

  async function runJob(job: ClaimedAlertJob): Promise<void> {
    const about = { job: job.id, account: job.account_id, kind: job.kind, attempt: job.attempts };
    let outcome: AlertJobOutcome;
    if (job.kind === 'sms') {
      try {
        if (!(await alerts.queueSms(job))) log.warn(about, 'alert SMS job was taken by another worker');
        else {
          log.info(about, 'balance alert SMS queued');
          metrics?.ran(job.kind, 'sent');
          deps.queued?.();
        }
        return;
      } catch (error) {
        outcome = { kind: 'failed', error: (error as Error).message, permanent: false };
      }
    } else if (job.kind === 'email') {
      outcome = await sendEmail(job);
    } else {
      outcome = { kind: 'failed', error: `unknown alert job kind "${job.kind}"`, permanent: true };
    }
    const state = await alerts.record(job, outcome);
    if (state) metrics?.ran(job.kind, state === 'pending' ? 'retry' : state);
    if (outcome.kind === 'sent') {
      log.info(about, 'balance alert e-mail sent');
    } else if (state === 'failed') {
      log.error(
        { ...about, reason: outcome.error },
        `balance alert ${job.kind} failed and will not be retried`,
      );
    } else if (state === 'pending') {
      log.warn({ ...about, reason: outcome.error }, `balance alert ${job.kind} failed; it will be retried`);
    }
  }

  const loop = createPollLoop({
    pollMs: options.pollMs,
    sweepMs: options.sweepMs,
    async sweep() {
      const released = await alerts.releaseExpiredLeases();
      if (released > 0) log.warn({ released }, 'released alert jobs whose worker stopped mid-send');
    },
    async step() {
      const batch = await alerts.claim(options.batchSize);
      if (batch.length === 0) return false;
      // Side by side, so each job's lease covers one SMTP exchange, not the batch's queue before it.
      await Promise.all(batch.map(runJob));
      return true;
    },
    onError: (error) => log.error({ err: error }, 'alert loop failed; retrying'),
  });

  return {
    start(): void {
      loop.start();
    },

    /** Looks for due jobs now instead of at the next poll. */
    wake(): void {
      loop.wake();
    },

    async stop(): Promise<void> {
      await loop.stop();
      mailer?.close();
    },
  };
}
