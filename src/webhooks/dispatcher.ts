// The webhook dispatcher: fans new events out to deliveries, leases due deliveries, POSTs them signed, and
// records every attempt. Sending is parallel with two bounds: at most `perWebhookInFlight` requests to one
// webhook at a time, and at most `maxClaimed` deliveries held by this process (leased, being sent, or
// waiting for their outcome to be written). One webhook may hold at most `perWebhookAhead` of them, queued
// behind its requests so that a fast receiver never waits for a claim; a slow one (no answer for `slowMs`
// while its requests are out) gives back what it had queued and holds no more than its requests in flight,
// so a receiver that hangs fills its own slots and never the others'.
import type { Clock } from '../shared/clock.ts';
import { GroupCommit } from '../shared/group-commit.ts';
import type { Log } from '../shared/log.ts';
import { createPollLoop } from '../shared/poll-loop.ts';
import { recordRetry } from '../shared/write-retry.ts';
import { encodeBody } from './body-format.ts';
import type { HttpSender, WebhookRequest } from './http-sender.ts';
import { maxAttempts } from './retry-schedule.ts';
import { standardSignature } from './signing.ts';
import {
  type AttemptResult,
  type ClaimedDelivery,
  isSuccess,
  type WebhookDeliveriesService,
} from './webhook-deliveries.service.ts';

export interface DispatcherOptions {
  pollMs: number;
  /** Events fanned out per transaction. */
  fanOutBatch: number;
  /** Deliveries this process holds at once, over all webhooks. */
  maxClaimed: number;
  /** Requests in flight to one webhook. */
  perWebhookInFlight: number;
  /** Deliveries of one webhook this process holds at once (queued behind its in-flight requests). */
  perWebhookAhead: number;
  /**
   * A webhook none of whose requests has been answered for this long (or whose last answer took this long,
   * or never came) is slow: its queued deliveries are given back, and it holds only its requests in flight
   * until one is answered sooner (1000 ms).
   */
  slowMs?: number;
  /** How often to give back deliveries whose dispatcher died mid-send. */
  sweepMs: number;
  /** On stop, how long requests in flight may finish before they are cut and given back. */
  stopGraceMs: number;
  /** How long a finished attempt may wait for others to be recorded in the same transaction (10 ms). */
  recordDelayMs?: number;
}

interface WebhookSlot {
  /** Deliveries of this webhook held by this process. */
  held: number;
  inFlight: number;
  /** Since when (Date.now()) its requests in flight have had no answer. */
  waitingSince: number;
  queue: ClaimedDelivery[];
}

export type Dispatcher = ReturnType<typeof createDispatcher>;

/** How often at most a claim may look past the backlog of webhooks that have no room left. */
const wideClaimMs = 200;
/** Slow webhooks remembered at most (the map starts afresh past it: each is found slow again in `slowMs`). */
const maxSlowWebhooks = 10_000;

/**
 * The request of one attempt: the event in the webhook's format (JSON, or a form), the SMSFactor signature,
 * and Standard Webhooks headers signing the body as sent.
 */
export function webhookRequest(delivery: ClaimedDelivery, attemptedAt: number): WebhookRequest {
  // Stable across retries, so a receiver can drop a delivery it already processed.
  const msgId = `msg_${delivery.id}`;
  const timestamp = Math.floor(attemptedAt / 1000);
  const { body, contentType } = encodeBody(delivery.body, delivery.format);
  const headers: Record<string, string> = {
    'content-type': contentType,
    'user-agent': 'Pigeon-Webhooks/1',
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(delivery.secret, msgId, timestamp, body),
  };
  if (delivery.signature !== null) headers['X-SMSFactor-Signature'] = delivery.signature;
  return { url: delivery.url, body, headers };
}

export function createDispatcher(deps: {
  deliveries: WebhookDeliveriesService;
  sender: HttpSender;
  clock: Clock;
  log: Log;
  options: DispatcherOptions;
  /** Told of each attempt's outcome, for the operator's metrics (src/ops). */
  metrics?: { attempted(outcome: 'success' | 'retry' | 'failed'): void };
}) {
  const { deliveries, sender, clock, log, options } = deps;
  let lastWideClaim = 0;
  let held = 0;
  const slots = new Map<number, WebhookSlot>();
  const slowMs = options.slowMs ?? 1000;
  /** Webhooks found slow, kept past their slot (which goes once they hold nothing) until one answers in time. */
  const slow = new Set<number>();
  /** Set once stop() cuts what is still in flight: cut requests are given back, not counted. */
  let cutting = false;
  let drained: (() => void) | undefined;

  // An attempt's record that fails is kept and retried until the database takes it: the request was made, and
  // dropping its outcome would leave the delivery `sending` under a term this process keeps renewing. While it
  // fails, no request starts and nothing is claimed, so what was sent unrecorded stays within `maxClaimed`.
  const recordWrites = recordRetry(
    log,
    {
      failing:
        'could not record webhook attempts; holding them and sending nothing until the database takes them',
      recovered: 'webhook attempts recorded again; sending resumes',
    },
    () => results.pending,
  );
  const results = new GroupCommit<AttemptResult>(
    async (items) => {
      let paused: number[] = [];
      await recordWrites.run(async () => {
        paused = await deliveries.record(items);
      });
      for (const webhookId of paused) {
        log.warn({ webhookId }, 'webhook paused: no successful delivery for too long');
      }
    },
    // Only once the retry was abandoned (stopping while the database does not answer).
    (error, items) =>
      log.error(
        { err: error, count: items.length },
        "stopped before webhook attempts could be recorded; they are sent again once this process's lease term lapses",
      ),
    { maxItems: 1000, delayMs: options.recordDelayMs ?? 10 },
  );

  function slot(webhookId: number): WebhookSlot {
    let s = slots.get(webhookId);
    if (!s) {
      s = { held: 0, inFlight: 0, waitingSince: 0, queue: [] };
      slots.set(webhookId, s);
    }
    return s;
  }

  const roomOf = (webhookId: number) =>
    (slow.has(webhookId) ? options.perWebhookInFlight : options.perWebhookAhead) -
    (slots.get(webhookId)?.held ?? 0);

  /** Gives back the deliveries a slow webhook has queued (unsent, no attempt counted), for others to take. */
  function markSlow(webhookId: number, s: WebhookSlot): void {
    if (!slow.has(webhookId)) {
      if (slow.size >= maxSlowWebhooks) slow.clear();
      slow.add(webhookId);
      log.warn({ webhookId, slowMs }, 'webhook slow or not answering: holding only its requests in flight');
    }
    const queued = s.queue.splice(0);
    if (queued.length === 0) return;
    s.held -= queued.length;
    held -= queued.length;
    for (const delivery of queued) {
      results.add({ kind: 'released', delivery }).catch(() => {});
    }
    wake();
  }

  function enqueue(delivery: ClaimedDelivery): void {
    const s = slot(delivery.webhookId);
    s.held++;
    held++;
    s.queue.push(delivery);
    pump(delivery.webhookId, s);
  }

  function pump(webhookId: number, s: WebhookSlot): void {
    while (s.inFlight < options.perWebhookInFlight && s.queue.length > 0) {
      const delivery = s.queue.shift()!;
      if (s.inFlight === 0) s.waitingSince = Date.now();
      s.inFlight++;
      void deliver(webhookId, s, delivery);
    }
  }

  /** The attempt's result; undefined when the delivery was dropped unsent, its lease term lost. */
  async function attempt(delivery: ClaimedDelivery): Promise<AttemptResult | undefined> {
    if (cutting) return { kind: 'released', delivery };
    // No request starts while attempts wait to be recorded; one stopping meanwhile is not sent, its delivery
    // going back to the queue with its lease term.
    if (!(await recordWrites.writable())) return undefined;
    // Fencing: a dispatcher whose lease term was not renewed in time (it stalled) may have had this delivery
    // taken by another; it neither sends nor records it, and the delivery goes back to the queue.
    if (!deliveries.leases.holds(delivery.owner)) return undefined;
    const attemptedAt = clock.now();
    const request = webhookRequest(delivery, attemptedAt);
    const outcome = await sender.send(request);
    if (outcome.httpCode === null && cutting) return { kind: 'released', delivery };
    deps.metrics?.attempted(
      isSuccess(outcome.httpCode) ? 'success' : delivery.attempt >= maxAttempts ? 'failed' : 'retry',
    );
    return { kind: 'attempted', delivery, attemptedAt, request, outcome };
  }

  async function deliver(webhookId: number, s: WebhookSlot, delivery: ClaimedDelivery): Promise<void> {
    let result: AttemptResult | undefined;
    try {
      result = await attempt(delivery);
    } catch (error) {
      // The sender reports failures as outcomes; anything thrown is a bug, and the lease will retry it.
      log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt failed unexpectedly');
      result = { kind: 'released', delivery };
    }
    s.inFlight--;
    s.waitingSince = Date.now();
    if (result?.kind === 'attempted') {
      const { outcome } = result;
      if (outcome.httpCode !== null && outcome.latencyMs < slowMs) slow.delete(webhookId);
      else markSlow(webhookId, s);
    }
    // The next request to this webhook starts now; this outcome is written with others of the same turn.
    pump(webhookId, s);
    if (result) await results.add(result);
    s.held--;
    held--;
    if (s.held === 0) slots.delete(webhookId);
    if (held === 0) drained?.();
    // Claim again when a webhook or the process has half its room back, not after every delivery: one
    // claim then takes a batch, instead of a transaction per delivery.
    if (
      s.held === 0 ||
      s.held === Math.floor(options.perWebhookAhead / 2) ||
      held === Math.floor(options.maxClaimed / 2)
    ) {
      wake();
    }
  }

  /** Claims up to `free` due deliveries and starts them; returns how many. */
  async function claim(free: number): Promise<number> {
    const first = await deliveries.claim(free, roomOf, []);
    for (const delivery of first.claimed) enqueue(delivery);
    let claimed = first.claimed.length;
    // The oldest due deliveries belonged to webhooks with no room left: look past them, skipping those
    // webhooks. That read walks their backlog row by row, so it runs at most every `wideClaimMs`.
    if (first.crowded && claimed < free && Date.now() - lastWideClaim >= wideClaimMs) {
      lastWideClaim = Date.now();
      const full = [...slots].filter(([id]) => roomOf(id) <= 0).map(([id]) => id);
      if (full.length > 0) {
        const second = await deliveries.claim(free - claimed, roomOf, full);
        for (const delivery of second.claimed) enqueue(delivery);
        claimed += second.claimed.length;
      }
    }
    return claimed;
  }

  const loop = createPollLoop({
    pollMs: options.pollMs,
    sweepMs: options.sweepMs,
    async sweep() {
      const now = Date.now();
      for (const [webhookId, s] of slots) {
        if (s.inFlight > 0 && now - s.waitingSince >= slowMs) markSlow(webhookId, s);
      }
      const released = await deliveries.releaseExpiredLeases();
      if (released > 0) log.warn({ released }, 'gave back webhook deliveries whose dispatcher stopped');
    },
    async step() {
      if (!(await recordWrites.writable())) return false;
      // Due deliveries first (retries, and any a fan-out left pending), oldest due first.
      const free = options.maxClaimed - held;
      const claimed = free > 0 ? await claim(free) : 0;
      // Then new events, made deliveries only as this process can send them: as many as the room the claim
      // left, leased at once. A delivery written pending would cost a claim's update of its row before it is
      // sent. Events wait in the outbox meanwhile (while this process is full), where any dispatcher with
      // room takes them.
      const room = options.maxClaimed - held;
      let moreEvents = false;
      if (claimed < free && room > 0) {
        const batch = Math.min(options.fanOutBatch, room);
        const fanned = await deliveries.fanOut(batch, { events: room, room: roomOf });
        for (const delivery of fanned.claimed) enqueue(delivery);
        moreEvents = fanned.events >= batch;
      }
      // Look again at once while there is more to take; else wait for a slot, new work, or the poll.
      return (free > 0 && claimed >= free) || (moreEvents && held < options.maxClaimed);
    },
    onError: (error) => log.error({ err: error }, 'webhook dispatch loop failed; retrying'),
  });
  const wake = loop.wake;

  return {
    start(): void {
      deliveries.leases.start(log);
      loop.start();
    },

    /** Looks for new events and due deliveries now instead of at the next poll. */
    wake,

    /** Deliveries this process holds (leased, in flight, or waiting for their outcome to be written). */
    get held(): number {
      return held;
    },

    /**
     * Stops taking work, lets requests in flight finish for `stopGraceMs`, then cuts the rest and gives
     * them back (no attempt counted), and writes every outcome before resolving.
     */
    async stop(): Promise<void> {
      // Records still failing are given up (each tried once more), and deliveries waiting for them are not
      // sent: a stop must not wait for a database that may not come back; the lease rules send them again.
      recordWrites.abandon();
      await loop.stop();
      if (held > 0) {
        const allDone = new Promise<void>((resolve) => {
          drained = resolve;
        });
        const grace = new Promise<void>((resolve) => setTimeout(resolve, options.stopGraceMs).unref());
        await Promise.race([allDone, grace]);
        cutting = true;
        sender.cancelAll();
        if (held > 0) await allDone;
      }
      await results.drain();
      await sender.close();
      await deliveries.leases.stop();
    },
  };
}
