// Webhook delivery rules: which webhooks an event goes to, when a failed delivery is tried again, when a webhook
// that keeps failing is paused. Each step is one transaction, so a crash between two loses nothing: an
// event is either fanned out with its deliveries or not at all, and an attempt's outcome is recorded with
// its log row and its webhook's last answer.
import type { Clock } from '../shared/clock.ts';
import type { Db, DialectName, Executor } from '../store/db.ts';
import { createLeaseHolder } from '../store/lease-holder.ts';
import type { SendOutcome, WebhookRequest } from './http-sender.ts';
import { retryAfterMs, retryDelayMs } from './retry-schedule.ts';
import { type LeasedRow, type NewAttempt, webhookDeliveriesRepo } from './webhook-deliveries.repo.ts';

export interface ClaimedDelivery {
  id: number;
  webhookId: number;
  eventId: number | null;
  eventType: string;
  /** This attempt's number, from 1. */
  attempt: number;
  /** The lease term it was leased under: it is sent only while the dispatcher still holds that term. */
  owner: number;
  url: string;
  secret: string;
  signature: string | null;
  /** The webhook's body format: `json`, or `form` (application/x-www-form-urlencoded). */
  format: string;
  body: string;
}

export type AttemptResult =
  | {
      kind: 'attempted';
      delivery: ClaimedDelivery;
      attemptedAt: number;
      /** What was sent, kept in the attempt log. */
      request: WebhookRequest;
      outcome: SendOutcome;
    }
  /** Not attempted after all (the dispatcher stopped): back to pending, no attempt counted. */
  | { kind: 'released'; delivery: ClaimedDelivery };

export interface WebhookDeliveriesOptions {
  /**
   * How long a dispatcher's lease term outlives its last heartbeat (LEASE_SECONDS): past it, another dispatcher
   * takes what it held.
   */
  leaseMs: number;
  /** How long before its term's end a dispatcher stops starting requests (store/lease-holder.ts). */
  leaseGuardMs: number;
  /** A webhook with no success for this long is paused. */
  pauseAfterMs: number;
  /** The furthest a receiver's Retry-After may push its next attempt. */
  retryAfterMaxMs: number;
}

export type WebhookDeliveriesService = ReturnType<typeof createWebhookDeliveriesService>;

export const isSuccess = (code: number | null) => code !== null && code >= 200 && code <= 299;

/**
 * How much of a request's body the attempt log keeps. Event bodies are far smaller; the bound is for a
 * CLICKER's long URL or a long reply, so one attempt's row stays small.
 */
export const requestBodyLogChars = 8192;

export function createWebhookDeliveriesService(deps: {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  options: WebhookDeliveriesOptions;
}) {
  const { db, dialect, clock, options } = deps;
  const leases = createLeaseHolder({
    db,
    clock,
    options: { queue: 'webhook_deliveries', leaseMs: options.leaseMs, guardMs: options.leaseGuardMs },
  });

  /** Ids grouped by the lease term they were leased under (a batch may span a term that lapsed). */
  function byOwner(deliveries: ClaimedDelivery[]): Map<number, number[]> {
    const groups = new Map<number, number[]>();
    for (const d of deliveries) {
      const ids = groups.get(d.owner);
      if (ids) ids.push(d.id);
      else groups.set(d.owner, [d.id]);
    }
    return groups;
  }

  /**
   * What sending needs of deliveries just leased under `owner`: their webhook and body. A delivery whose
   * webhook was paused meanwhile is held instead, in the same transaction.
   */
  async function readyToSend(
    tx: Executor,
    leased: LeasedRow[],
    owner: number,
    now: number,
  ): Promise<ClaimedDelivery[]> {
    if (leased.length === 0) return [];
    const webhooks = new Map(
      (await webhookDeliveriesRepo.webhooksForSending(tx, [...new Set(leased.map((d) => d.webhook_id))])).map(
        (w) => [w.id, w],
      ),
    );
    const eventIds = leased.flatMap((d) => (d.event_id === null ? [] : [d.event_id]));
    const payloads = new Map(
      eventIds.length === 0
        ? []
        : (await webhookDeliveriesRepo.eventPayloads(tx, eventIds)).map((e) => [e.id, e.payload]),
    );
    const claimed: ClaimedDelivery[] = [];
    const notLive: number[] = [];
    for (const d of leased) {
      const webhook = webhooks.get(d.webhook_id);
      if (webhook?.status !== 'live') {
        notLive.push(d.id);
        continue;
      }
      claimed.push({
        id: d.id,
        webhookId: d.webhook_id,
        eventId: d.event_id,
        eventType: d.event_type,
        attempt: d.attempts + 1,
        owner,
        url: webhook.url,
        secret: webhook.secret,
        signature: webhook.signature,
        format: webhook.format,
        body: d.payload ?? (d.event_id === null ? undefined : payloads.get(d.event_id)) ?? '{}',
      });
    }
    if (notLive.length > 0) await webhookDeliveriesRepo.unlease(tx, notLive, owner, 'held', now);
    return claimed;
  }

  return {
    /**
     * This process's hold on the deliveries it leased: the dispatcher starts its heartbeat, and sends a
     * delivery only while `leases.holds(delivery.owner)`.
     */
    leases,

    /**
     * Turns up to `limit` events into one delivery per live webhook of their account and type, and marks them
     * fanned out, in one transaction. The deliveries of the first `lease.events` events are leased at once
     * to this dispatcher (its term) and answered ready to send, at most `lease.room(webhookId)` of each
     * webhook (the rest are given back pending at once); the others wait pending for a claim. Returns how
     * many events it took, the deliveries leased, and whether any of its deliveries were left pending.
     */
    async fanOut(
      limit: number,
      lease?: { events: number; room: (webhookId: number) => number },
    ): Promise<{ events: number; claimed: ClaimedDelivery[]; leftPending: boolean }> {
      const now = clock.now();
      const none = { events: 0, claimed: [], leftPending: false };
      // Most passes find nothing: a plain read of the small partial index spares them a transaction.
      if (!(await webhookDeliveriesRepo.anyEventToFanOut(db))) return none;
      const fanOut = (owner: number | undefined) =>
        db.transaction().execute(async (tx) => {
          const events = await webhookDeliveriesRepo.eventsToFanOut(tx, dialect, limit);
          if (events.length === 0) return none;
          const ids = events.map((e) => e.id);
          const leasedCount = owner === undefined ? 0 : Math.min(lease!.events, ids.length);
          let claimed: ClaimedDelivery[] = [];
          let overflow = false;
          if (leasedCount > 0) {
            const rows = await webhookDeliveriesRepo.insertFanOutLeased(tx, ids.slice(0, leasedCount), now, {
              owner: owner!,
              leaseUntil: now + options.leaseMs,
            });
            // An event may have several webhooks, and a webhook be near its bound: what exceeds the dispatcher's
            // room (`lease.events` deliveries in all) or a webhook's waits pending.
            const taken = new Map<number, number>();
            const kept: LeasedRow[] = [];
            const over: number[] = [];
            for (const row of rows) {
              const count = taken.get(row.webhook_id) ?? 0;
              if (kept.length >= lease!.events || count >= lease!.room(row.webhook_id)) over.push(row.id);
              else {
                taken.set(row.webhook_id, count + 1);
                kept.push(row);
              }
            }
            if (over.length > 0) {
              overflow = true;
              await webhookDeliveriesRepo.unlease(tx, over, owner!, 'pending', now);
            }
            claimed = await readyToSend(tx, kept, owner!, now);
          }
          const pending =
            leasedCount < ids.length
              ? await webhookDeliveriesRepo.insertFanOut(tx, ids.slice(leasedCount), now)
              : 0;
          await webhookDeliveriesRepo.markFannedOut(tx, ids);
          return { events: events.length, claimed, leftPending: overflow || pending > 0 };
        });
      // Leasing deliveries, a failed transaction may have committed them unseen: `leasing` retires the term.
      return lease && lease.events > 0 ? leases.leasing(fanOut) : fanOut(undefined);
    },

    /**
     * Leases up to `limit` due deliveries, at most `room(webhookId)` of each webhook and none of the webhooks
     * in `skip`, with what sending them needs. A delivery whose webhook was paused meanwhile is held instead.
     * `crowded` says that due deliveries were left for lack of room: with `skip` empty, the oldest due
     * may all belong to webhooks that are full, hiding other webhooks' deliveries behind them.
     */
    async claim(
      limit: number,
      room: (webhookId: number) => number,
      skip: number[],
    ): Promise<{ claimed: ClaimedDelivery[]; crowded: boolean }> {
      const now = clock.now();
      // Most passes find nothing due (a fan-out leases the deliveries it makes): a plain read of the partial
      // index spares them a transaction, and the term its renewal.
      if (!(await webhookDeliveriesRepo.anyDue(db, now))) return { claimed: [], crowded: false };
      return leases.leasing((owner) =>
        db.transaction().execute(async (tx) => {
          // Read past `limit`, so that a webhook without room at the head of the queue leaves some for others
          // (a backlog longer than that is looked past by a claim with `skip`).
          const due = await webhookDeliveriesRepo.dueDeliveries(tx, dialect, now, limit + 64, skip);
          const taken = new Map<number, number>();
          const picked: number[] = [];
          let crowded = false;
          for (const row of due) {
            if (picked.length >= limit) break;
            const count = taken.get(row.webhook_id) ?? 0;
            if (count >= room(row.webhook_id)) {
              crowded = true;
              continue;
            }
            taken.set(row.webhook_id, count + 1);
            picked.push(row.id);
          }
          if (picked.length === 0) return { claimed: [], crowded };
          const leased = await webhookDeliveriesRepo.lease(tx, picked, owner, now + options.leaseMs, now);
          return { claimed: await readyToSend(tx, leased, owner, now), crowded };
        }),
      );
    },

    /**
     * Records a batch of outcomes: delivered, or the next attempt per the schedule and Retry-After, or failed
     * once the schedule is spent; the attempt log; each webhook's last answer; and pauses the webhooks with
     * no success for `pauseAfterMs`, holding their pending deliveries. Returns the ids of webhooks paused.
     */
    async record(results: AttemptResult[]): Promise<number[]> {
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const released = results.filter((r) => r.kind === 'released').map((r) => r.delivery);
        for (const [owner, ids] of byOwner(released)) {
          await webhookDeliveriesRepo.unlease(tx, ids, owner, 'pending', now);
        }
        const attempted = results.filter((r) => r.kind === 'attempted');
        if (attempted.length === 0) return [];

        // Per webhook, in the batch's order: its last answer, and whether it ended the batch failing.
        const last = new Map<number, { code: number | null; ok: boolean; anyOk: boolean }>();
        for (const r of attempted) {
          const ok = isSuccess(r.outcome.httpCode);
          const prev = last.get(r.delivery.webhookId);
          last.set(r.delivery.webhookId, {
            code: r.outcome.httpCode,
            ok,
            anyOk: ok || (prev?.anyOk ?? false),
          });
        }
        const failing = [...last].filter(([, s]) => !s.ok).map(([id]) => id);
        const current = new Map(
          failing.length === 0
            ? []
            : (await webhookDeliveriesRepo.webhookStatuses(tx, failing)).map((w) => [w.id, w]),
        );
        // Decide the pauses first, so the attempts that cause them are recorded as held, not rescheduled.
        const cutoff = now - options.pauseAfterMs;
        const pausing = new Set<number>();
        const paused = new Set<number>();
        for (const id of failing) {
          const w = current.get(id);
          if (!w) continue;
          if (w.status !== 'live') paused.add(id);
          const failingSince = last.get(id)?.anyOk ? now : (w.failing_since ?? now);
          if (w.status === 'live' && failingSince <= cutoff) pausing.add(id);
        }

        const successes = attempted.filter((r) => isSuccess(r.outcome.httpCode));
        const delivered = new Set<number>();
        for (const [owner, ids] of byOwner(successes.map((r) => r.delivery))) {
          for (const id of await webhookDeliveriesRepo.markDelivered(tx, ids, owner, now)) delivered.add(id);
        }
        const log: NewAttempt[] = [];
        const entry = (r: (typeof attempted)[number], next: number | null): NewAttempt => ({
          webhook_id: r.delivery.webhookId,
          delivery_id: r.delivery.id,
          event_id: r.delivery.eventId,
          event_type: r.delivery.eventType,
          attempt: r.delivery.attempt,
          http_code: r.outcome.httpCode,
          error: r.outcome.error,
          latency_ms: r.outcome.latencyMs,
          attempted_at: r.attemptedAt,
          next_attempt_at: next,
          request_headers: JSON.stringify(r.request.headers),
          request_body: r.request.body.slice(0, requestBodyLogChars),
          response_body: r.outcome.answerExcerpt,
        });
        for (const r of attempted) {
          if (isSuccess(r.outcome.httpCode)) {
            if (delivered.has(r.delivery.id)) log.push(entry(r, null));
            continue;
          }
          const hold = paused.has(r.delivery.webhookId) || pausing.has(r.delivery.webhookId);
          const scheduled = retryDelayMs(r.delivery.attempt);
          let state: 'pending' | 'failed' | 'held' = 'failed';
          let next = now;
          if (scheduled !== undefined) {
            const asked = retryAfterMs(r.outcome.retryAfter, now, options.retryAfterMaxMs) ?? 0;
            next = now + Math.max(scheduled, asked);
            state = hold ? 'held' : 'pending';
          }
          if (await webhookDeliveriesRepo.markFailed(tx, r.delivery.id, r.delivery.owner, state, next, now)) {
            log.push(entry(r, state === 'pending' ? next : null));
          }
        }
        if (log.length > 0) await webhookDeliveriesRepo.insertAttempts(tx, log);

        // In id order, so that two dispatchers recording at once on PostgreSQL lock webhooks in one order.
        for (const [id, s] of [...last].sort((a, b) => a[0] - b[0])) {
          const failingSince = s.ok ? null : s.anyOk ? now : 'keep-or-now';
          // No answer at all (refused, timed out, unreachable) is recorded as 0.
          await webhookDeliveriesRepo.setOutcome(tx, id, s.code ?? 0, failingSince, now);
        }
        if (pausing.size === 0) return [];
        const nowPaused = await webhookDeliveriesRepo.pauseFailing(tx, [...pausing], cutoff, now);
        if (nowPaused.length > 0) await webhookDeliveriesRepo.holdPending(tx, nowPaused, now);
        return nowPaused;
      });
    },

    /** Deliveries leased by a dispatcher that stopped mid-send become pending again. */
    releaseExpiredLeases(): Promise<number> {
      return webhookDeliveriesRepo.releaseExpiredLeases(db, clock.now());
    },

    /**
     * The work waiting over every account, for the operator's metrics: deliveries due at `now`, retrying
     * (pending until a later attempt), leased, events not yet fanned out, when the oldest of these pending
     * deliveries and events was created, and the earliest time any of that work was due (null when none): a
     * pending delivery's next attempt, or an event's creation (a dispatcher fans events out only as it has
     * room to send them, so a dispatcher that falls behind leaves events waiting, not deliveries).
     */
    async backlog(now: number) {
      const found = { due: 0, retrying: 0, sending: 0, eventsWaiting: 0 };
      let oldestPendingAt: number | null = null;
      let firstAttemptAt: number | null = null;
      const older = (a: number | null, b: number | string | null) =>
        b === null ? a : a === null ? Number(b) : Math.min(a, Number(b));
      for (const row of await webhookDeliveriesRepo.backlog(db, now)) {
        const n = Number(row.n);
        if (row.kind === 'pending') {
          found.due = Number(row.due ?? 0);
          found.retrying = n - found.due;
          firstAttemptAt = older(firstAttemptAt, row.first_due);
        } else if (row.kind === 'sending') found.sending = n;
        else {
          found.eventsWaiting = n;
          firstAttemptAt = older(firstAttemptAt, row.oldest);
        }
        if (row.kind !== 'sending') oldestPendingAt = older(oldestPendingAt, row.oldest);
      }
      return { ...found, oldestPendingAt, firstAttemptAt };
    },
  };
}
