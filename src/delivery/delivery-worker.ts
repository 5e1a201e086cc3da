// The delivery worker: leases due messages in batches, submits their parts through the transport, and
// records each outcome (with its events); it leases the next batch once the current one is submitted and
// the one before is recorded. Receipts and replies from the transport are recorded in batches too, and
// acknowledged to the carrier only once written.

import type { Config } from '../config.ts';
import { backoffMs } from '../shared/backoff.ts';
import type { Clock } from '../shared/clock.ts';
import { GroupCommit } from '../shared/group-commit.ts';
import type { Log } from '../shared/log.ts';
import { createPollLoop } from '../shared/poll-loop.ts';
import { Semaphore } from '../shared/semaphore.ts';
import { recordRetry } from '../shared/write-retry.ts';
import { nextOpening } from '../sms/sending-window.ts';
import type { DeliveryService, SubmitResult } from './delivery.service.ts';
import type { ClaimedMessage } from './messages.repo.ts';
import { buildParts } from './outbound-parts.ts';
import type { RepliesService } from './replies.service.ts';
import type { InboundMessage, Receipt, SubmitOutcome, Transport } from './transport.ts';

export interface WorkerOptions {
  batchSize: number;
  pollMs: number;
  validityMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** How often to release expired leases and match receipts that overtook their submit's record. */
  sweepMs: number;
  /**
   * The next instant marketing may be sent at (the instant itself when the window is open). A marketing
   * message taken outside the window (a retry, or a backlog past closing time) waits for it. Without it
   * marketing is sent at any time (the server always passes the configured window).
   */
  nextMarketingOpening?: (instantMs: number) => number;
}

/**
 * The worker's options from the configuration, with its own tunables: a failed submit is retried after 5 s,
 * doubled up to 10 min; expired leases and early receipts are swept every second.
 */
export const deliveryWorkerOptions = (
  config: Pick<Config, 'WORKER_BATCH_SIZE' | 'WORKER_POLL_MS' | 'MESSAGE_VALIDITY_MS' | 'MARKETING_WINDOW'>,
): WorkerOptions => ({
  batchSize: config.WORKER_BATCH_SIZE,
  pollMs: config.WORKER_POLL_MS,
  validityMs: config.MESSAGE_VALIDITY_MS,
  retryBaseMs: 5_000,
  retryMaxMs: 600_000,
  sweepMs: 1000,
  nextMarketingOpening: (instant) => nextOpening(config.MARKETING_WINDOW, instant),
});

/**
 * How long before the end of its lease the worker stops submitting a message it leased: a third of the lease.
 * A submit goes on the wire in the turn of its check: the guard only covers clocks differing by host.
 */
export const deliveryLeaseGuardMs = (config: Pick<Config, 'LEASE_SECONDS'>) =>
  Math.ceil((config.LEASE_SECONDS * 1000) / 3);

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

/** Told of each submit and receipt, for the operator's metrics (src/ops). */
export interface DeliveryWorkerMetrics {
  /** A part's submit ended; `seconds` from handing it to the transport to its answer. */
  submitted(outcome: SubmitOutcome, seconds: number): void;
  receipt(receipt: Receipt): void;
}

/** Logged when submit outcomes and receipts failed to be written together and were then written apart. */
export const outcomesApartMessage =
  'submit outcomes and receipts could not be written together, and were written apart';

/** Messages closed for want of a receipt per transaction, and transactions per sweep. */
const receiptTimeoutBatchSize = 1000;
const maxReceiptTimeoutBatches = 5;

export function createDeliveryWorker(deps: {
  delivery: DeliveryService;
  /** Replies and their parts: recorded as they come, and completed by the sweep. */
  replies: Pick<RepliesService, 'recordInbound' | 'assembleWaitingReplies'>;
  transport: Transport;
  clock: Clock;
  log: Log;
  options: WorkerOptions;
  /** Told after outcomes, receipts or replies were committed: they may have written events. */
  recorded?: () => void;
  metrics?: DeliveryWorkerMetrics;
}) {
  const { delivery, replies, transport, clock, log, options, metrics } = deps;
  const recorded = deps.recorded ?? (() => {});

  const unrecorded = new Semaphore(transport.capacity);
  // A record that fails is kept and retried until the database takes it: the messages it reports were sent,
  // and dropping their outcomes would leave them `sending` under a term this process keeps renewing. While it
  // fails, nothing more is submitted, so what went out unrecorded stays within the permits already held.
  const recordWrites = recordRetry(
    log,
    {
      failing:
        'could not record submit outcomes and receipts; holding them and submitting nothing until the database takes them',
      recovered: 'submit outcomes and receipts recorded again; submitting resumes',
    },
    () => outcomes.pending,
  );
  // Submit outcomes and receipts are written together: one transaction for both, the outcomes first, so a
  // receipt right behind its submit_sm_resp finds its part. A batch waits up to 20 ms for company, which
  // leaves the write lock free between batches for the server's other processes.
  const outcomes = new GroupCommit<{ result: SubmitResult } | { receipt: Receipt }>(
    async (items) => {
      let results: SubmitResult[] = [];
      let receipts: Receipt[] = [];
      for (const item of items) {
        if ('result' in item) results.push(item.result);
        else receipts.push(item.receipt);
      }
      await recordWrites.run(async () => {
        try {
          await delivery.recordOutcomes(results, receipts);
        } catch (error) {
          if (results.length === 0 || receipts.length === 0) throw error;
          // Apart, so receipts that cannot be written do not keep the submits' record from landing; what
          // landed is not written again.
          const [submits, dlrs] = await Promise.allSettled([
            delivery.recordOutcomes(results, []),
            delivery.recordOutcomes([], receipts),
          ]);
          if (submits.status === 'fulfilled') results = [];
          if (dlrs.status === 'fulfilled') receipts = [];
          if (submits.status === 'rejected') throw submits.reason;
          if (dlrs.status === 'rejected') throw dlrs.reason;
          // Both landed apart: the write together failed for a reason of its own, which costs every batch
          // twice and would go unseen otherwise.
          log.warn({ err: error }, outcomesApartMessage);
        }
      });
      recorded();
    },
    // Only once the retry was abandoned (the worker stopping while the database does not answer).
    (error, items) =>
      log.error(
        { err: error, count: items.length },
        "stopped before submit outcomes and receipts could be recorded; their messages go back to the queue when this process's lease term lapses (at most the window is sent again), the carrier will offer the receipts again",
      ),
    // 500 a transaction: larger groups hold the write lock long enough to stall the API's sends (two
    // saturation pairs: 3,401 / 3,794 accepted sends/s at 500 against 3,033 / 3,208 at 2,000).
    { maxItems: 500, delayMs: 20 },
  );

  async function inbound(message: InboundMessage): Promise<void> {
    const stored = await replies.recordInbound(message);
    if (stored) recorded();
    if (!stored && (!message.part || message.part.seq === message.part.total)) {
      log.warn(
        // Masked (336****678): an erase cannot reach process logs, so they never hold a whole number.
        {
          from: message.from.length > 6 ? `${message.from.slice(0, 3)}****${message.from.slice(-3)}` : '****',
        },
        'reply from a number no account wrote to; ignored',
      );
    }
  }

  function retryAt(attempts: number): number {
    return clock.now() + backoffMs(attempts, options.retryBaseMs, options.retryMaxMs);
  }

  /**
   * Submits one message; undefined when it was dropped unsent because this worker no longer holds its lease
   * term (fencing: a worker that stalled past its lease may have had the message taken by another, so it
   * neither sends nor records it, and the message goes back to the queue).
   */
  async function sendOne(
    message: ClaimedMessage,
    sender: string | null,
    pushtype: string,
    ref: number,
  ): Promise<SubmitResult | undefined> {
    const holds = () => delivery.leases.holds(message.lease_owner);
    // Nothing more goes out while outcomes wait to be recorded; a worker stopping meanwhile sends it not at
    // all, and the message goes back to the queue with its lease term.
    if (!(await recordWrites.writable())) return undefined;
    if (!holds()) return undefined;
    const now = clock.now();
    if (message.due_at + options.validityMs <= now) return { kind: 'expired', message };
    if (pushtype === 'marketing') {
      const opening = options.nextMarketingOpening?.(now) ?? now;
      if (opening > now)
        return {
          kind: 'retry',
          message,
          retryAt: opening,
          error: 'waiting for the marketing sending window',
        };
    }
    const parts = buildParts({
      recipient: message.recipient,
      sender,
      text: message.text,
      encoding: message.encoding,
      ref,
    });
    // The router (src/delivery/routing/) chooses a route by the message's account, pushtype and country, and
    // keeps every part of it on one connector.
    const context = { messageId: message.id, accountId: message.account_id, pushtype };
    const smscIds: string[] = [];
    let carrier: { connector?: string; route?: string } = {};
    for (const part of parts) {
      const startedAt = metrics ? performance.now() : 0;
      // The transport asks `holds` again just before the part goes on the wire.
      const outcome = await transport.submit({ ...part, context }, holds);
      if (!outcome.ok && !holds()) return undefined;
      metrics?.submitted(outcome, (performance.now() - startedAt) / 1000);
      if (!outcome.ok) {
        if (outcome.retry)
          return { kind: 'retry', message, retryAt: retryAt(message.attempts), error: outcome.error };
        const failed = {
          kind: 'failed',
          message,
          dlrStatus: outcome.dlrStatus,
          error: outcome.error,
        } as const;
        // Unrouted before any part went out: nothing was sent, so the message is not charged.
        return outcome.noRoute && smscIds.length === 0 ? { ...failed, noRoute: true } : failed;
      }
      if (smscIds.length === 0) carrier = { connector: outcome.connector, route: outcome.route };
      smscIds.push(outcome.smscId);
    }
    return { kind: 'submitted', message, smscIds, ...carrier };
  }

  /**
   * Sends a leased batch. `sent` settles once every message of it has its submit outcome (the next batch may
   * then be claimed while these outcomes are written), `recorded` once every outcome is committed.
   */
  function runBatch(batch: ClaimedMessage[]): { sent: Promise<void>; recorded: Promise<void> } {
    let left = batch.length;
    let allSent!: () => void;
    const sent = new Promise<void>((resolve) => {
      allSent = resolve;
    });
    const oneSent = () => {
      if (--left === 0) allSent();
    };
    const recorded = (async () => {
      let campaigns: Awaited<ReturnType<DeliveryService['campaigns']>>;
      try {
        campaigns = await delivery.campaigns([...new Set(batch.map((m) => m.campaign_id))]);
      } catch (error) {
        allSent();
        throw error;
      }
      await Promise.all(
        batch.map(async (message) => {
          let counted = false;
          // A message holds its permit from submit until its outcome is committed: a crash can then
          // send again at most `capacity` messages, those submitted but not yet recorded.
          await unrecorded.acquire();
          try {
            const campaign = campaigns.get(message.campaign_id);
            const result = await sendOne(
              message,
              campaign?.sender ?? null,
              campaign?.pushtype ?? 'alert',
              message.id & 0xff,
            );
            counted = true;
            oneSent();
            if (result) await outcomes.add({ result });
          } finally {
            if (!counted) oneSent();
            unrecorded.release();
          }
        }),
      );
    })();
    // Awaited at the next claim; handled now, so a failure is not reported as unhandled meanwhile.
    recorded.catch(() => {});
    return { sent, recorded };
  }

  // A receipt read in the same chunk as its submit_sm_resp would otherwise be added before its submit's
  // outcome, whose promise chain runs only after the whole chunk is parsed: it would then find no part and
  // wait aside as an orphan (a fifth of them in a campaign), to be matched later one at a time. Receipts
  // therefore join the record after the turn's promise chains have run, all of a turn together.
  let thisTurn: Promise<void> | undefined;
  const afterThisTurn = (): Promise<void> =>
    (thisTurn ??= new Promise((resolve) =>
      setImmediate(() => {
        thisTurn = undefined;
        resolve();
      }),
    ));

  /** The outcomes of the batch before the one being sent: committed before the next claim. */
  let recording: Promise<void> = Promise.resolve();

  const loop = createPollLoop({
    pollMs: options.pollMs,
    sweepMs: options.sweepMs,
    async sweep() {
      const released = await delivery.releaseExpiredLeases();
      if (released > 0) log.warn({ released }, 'released messages whose worker stopped mid-send');
      await delivery.adoptOrphans();
      await replies.assembleWaitingReplies();
      // Messages whose receipt never came within DLR_WAIT: a few batches a sweep, so a large backlog of them
      // (an SMSC that sends no receipts) is closed over several sweeps without holding up the sends.
      for (let batch = 0; batch < maxReceiptTimeoutBatches; batch++) {
        if ((await delivery.closeUnreceipted(receiptTimeoutBatchSize)) < receiptTimeoutBatchSize) break;
      }
    },
    async step() {
      if (!transport.ready()) return false;
      if (!(await recordWrites.writable())) return false;
      const batch = await delivery.claim(options.batchSize);
      if (batch.length === 0) return false;
      // At most two batches at once: this one being sent, the one before it being recorded. The next claim
      // waits for both, so sending never stops for a batch's record and never runs ahead of it by more.
      const { sent, recorded } = runBatch(batch);
      await sent;
      const before = recording;
      recording = recorded;
      await before;
      return true;
    },
    onError: (error) => log.error({ err: error }, 'delivery loop failed; retrying'),
  });

  return {
    async start(): Promise<void> {
      delivery.leases.start(log);
      await transport.start({
        onReceipt: async (receipt) => {
          metrics?.receipt(receipt);
          await afterThisTurn();
          if (!(await outcomes.add({ receipt }))) throw new Error('receipt not recorded');
        },
        onInbound: inbound,
      });
      loop.start();
    },

    /** Looks for due messages now instead of at the next poll. */
    wake(): void {
      loop.wake();
    },

    async stop(): Promise<void> {
      // A record still failing is given up (each write tried once more): a stop must not wait for a database
      // that may not come back, and the lease rules return those messages to the queue.
      recordWrites.abandon();
      await loop.stop();
      await outcomes.drain();
      await recording.catch(() => {});
      await transport.stop();
      await outcomes.drain();
      await delivery.leases.stop();
    },
  };
}
