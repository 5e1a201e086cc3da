// SQL of webhook delivery: fanning events out to deliveries, leasing due deliveries, recording attempts,
// holding and resuming a paused webhook's deliveries. No rules here. The statements every delivery runs are
// compiled once per shape (store/prepared.ts): building them anew cost more than SQLite running them.
import { type Selectable, sql } from 'kysely';
import { insertRows } from '../store/bulk-insert.ts';
import { checkedOnly } from '../store/checked-only.ts';
import type { DialectName, Executor } from '../store/db.ts';
import { leaseQueue } from '../store/lease-queue.ts';
import { executePrepared, padToShape, runPrepared, shapedChunks, slot, slots } from '../store/prepared.ts';
import type {
  EventsTable,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhooksTable,
} from '../store/schema.ts';

/** What sending needs of a delivery it leased. */
const leasedColumns = [
  'id',
  'webhook_id',
  'event_id',
  'event_type',
  'attempts',
  'payload',
  'lease_owner',
] as const;

export type LeasedRow = Pick<Selectable<WebhookDeliveriesTable>, (typeof leasedColumns)[number]>;

/**
 * Pending deliveries, due at `next_attempt_at`; held ones (of a paused webhook) wait outside the queue.
 * An attempt is counted when its outcome is recorded, not when it is leased. Leased under the dispatcher's
 * lease term (store/lease-holder.ts).
 */
const deliveryQueue = leaseQueue({
  table: 'webhook_deliveries',
  waiting: 'pending',
  leased: 'sending',
  dueColumn: 'next_attempt_at',
  leaseCountsAttempt: false,
  termLeases: true,
});

export type NewAttempt = Omit<Selectable<WebhookAttemptsTable>, 'id'>;

/** What sending needs of a webhook. */
export type SendingWebhook = Pick<
  Selectable<WebhooksTable>,
  'id' | 'url' | 'secret' | 'signature' | 'format' | 'status'
>;

type EventPayload = Pick<Selectable<EventsTable>, 'id' | 'payload'>;

const batchRows = 500;

const attemptColumns = [
  'webhook_id',
  'delivery_id',
  'event_id',
  'event_type',
  'attempt',
  'http_code',
  'error',
  'latency_ms',
  'attempted_at',
  'next_attempt_at',
  'request_headers',
  'request_body',
  'response_body',
] as const satisfies readonly (keyof NewAttempt)[];

/** A slot typed as the column it stands for. */
const as = <T = never>(i: number) => slot(i) as unknown as T;

function chunks<T>(items: T[], size = batchRows): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Whether an event waits for its fan-out: ordered by id, so PostgreSQL reads the partial index of those events
 * (`events_to_fan_out`). Without the order, statistics taken while every event waited (a new database's first
 * ANALYZE) made it read `events` from the start until the first waiting one, past every event already fanned
 * out: the whole table each time (7.5 s of the database's 26 s in a 50,000-message campaign). Arguments: 0, 1.
 */
export const eventToFanOutProbe = (q: Executor) =>
  q.selectFrom('events').select('id').where('fanned_out', '=', as(0)).orderBy('id').limit(as(1));

/**
 * The deliveries of events `slots(5, size)`: one per live webhook (argument 0) of each event's account and
 * type, in state argument 1, at argument 2 (now), its lease's end and term arguments 3 and 4 (null for a
 * pending one).
 */
function fanOutInsert(q: Executor, size: number) {
  return q
    .insertInto('webhook_deliveries')
    .columns([
      'webhook_id',
      'account_id',
      'event_id',
      'event_type',
      'payload',
      'state',
      'attempts',
      'next_attempt_at',
      'lease_until',
      'lease_owner',
      'created_at',
      'updated_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('events')
        .innerJoin('webhooks', (join) =>
          join
            .onRef('webhooks.account_id', '=', 'events.account_id')
            .onRef('webhooks.type', '=', 'events.type'),
        )
        .where('events.id', 'in', slots(5, size))
        .where('webhooks.status', '=', as(0))
        .select([
          'webhooks.id',
          'events.account_id',
          'events.id',
          'events.type',
          // Typed casts: PostgreSQL cannot infer a bare parameter's type in a select list.
          sql<null>`cast(null as text)`.as('payload'),
          sql<string>`cast(${slot(1)} as text)`.as('state'),
          sql<number>`cast(0 as integer)`.as('attempts'),
          sql<number>`cast(${slot(2)} as bigint)`.as('next_attempt_at'),
          sql<number | null>`cast(${slot(3)} as bigint)`.as('lease_until'),
          sql<number | null>`cast(${slot(4)} as bigint)`.as('lease_owner'),
          sql<number>`cast(${slot(2)} as bigint)`.as('created_at'),
          sql<number>`cast(${slot(2)} as bigint)`.as('updated_at'),
        ])
        .orderBy('events.id')
        .orderBy('webhooks.id'),
    );
}

export const webhookDeliveriesRepo = {
  /**
   * Events not fanned out yet, oldest first. On PostgreSQL the rows stay locked until the transaction ends
   * and other dispatchers skip them (FOR UPDATE SKIP LOCKED); SQLite has one writer.
   */
  eventsToFanOut(db: Executor, dialect: DialectName, limit: number) {
    let query = db.selectFrom('events').select('id').where('fanned_out', '=', 0).orderBy('id').limit(limit);
    if (dialect === 'postgres') query = query.forUpdate().skipLocked();
    return query.execute();
  },

  async anyEventToFanOut(db: Executor): Promise<boolean> {
    const rows = await runPrepared(db, 'webhooks.anyEventToFanOut', eventToFanOutProbe, [0, 1]);
    return rows.length > 0;
  },

  /** One pending delivery per event and live webhook of the event's account and type; returns how many. */
  async insertFanOut(db: Executor, eventIds: number[], now: number): Promise<number> {
    let inserted = 0;
    for (const chunk of shapedChunks(eventIds, batchRows)) {
      const size = chunk.length;
      const result = await executePrepared(
        db,
        `webhooks.insertFanOut:${size}`,
        (q) => fanOutInsert(q, size),
        ['live', 'pending', now, null, null, ...chunk],
      );
      inserted += Number(result.numAffectedRows ?? 0);
    }
    return inserted;
  },

  /**
   * As insertFanOut, with each delivery leased at once under the term `owner` (`sending`, as a claim leaves
   * it): the dispatcher that fans the events out sends them itself, without a claim's read and update of each
   * row. Returns the deliveries, as a lease does.
   */
  async insertFanOutLeased(
    db: Executor,
    eventIds: number[],
    now: number,
    lease: { owner: number; leaseUntil: number },
  ): Promise<LeasedRow[]> {
    const out: LeasedRow[] = [];
    for (const chunk of shapedChunks(eventIds, batchRows)) {
      const size = chunk.length;
      const rows = await runPrepared<LeasedRow>(
        db,
        `webhooks.insertFanOutLeased:${size}`,
        (q) => fanOutInsert(q, size).returning(leasedColumns),
        ['live', 'sending', now, lease.leaseUntil, lease.owner, ...chunk],
      );
      out.push(...rows);
    }
    return out;
  },

  async markFannedOut(db: Executor, eventIds: number[]): Promise<void> {
    for (const chunk of shapedChunks(eventIds, batchRows)) {
      const size = chunk.length;
      await executePrepared(
        db,
        `webhooks.markFannedOut:${size}`,
        (q) =>
          q
            .updateTable('events')
            .set({ fanned_out: as(0) })
            .where('id', 'in', slots(1, size)),
        [1, ...chunk],
      );
    }
  },

  /** Whether a pending delivery is due: a plain read (dueDeliveries locks what it reads). */
  anyDue(db: Executor, now: number): Promise<boolean> {
    return deliveryQueue.anyDue(db, now);
  },

  /** Due pending deliveries, oldest due first, skipping the listed webhooks; locked as eventsToFanOut. */
  dueDeliveries(
    db: Executor,
    dialect: DialectName,
    now: number,
    limit: number,
    skipWebhooks: number[],
  ): Promise<Pick<Selectable<WebhookDeliveriesTable>, 'id' | 'webhook_id'>[]> {
    return deliveryQueue.due(db, dialect, { now, limit }, ['id', 'webhook_id'], {
      column: 'webhook_id',
      values: skipWebhooks,
    });
  },

  /** Leases pending deliveries under the term `owner`; returns those it leased. */
  lease(db: Executor, ids: number[], owner: number, leaseUntil: number, now: number): Promise<LeasedRow[]> {
    return deliveryQueue.lease(db, ids, { now, leaseUntil, owner }, leasedColumns);
  },

  webhooksForSending(db: Executor, ids: number[]) {
    const list = [...ids];
    const size = padToShape(list, 1);
    return runPrepared<SendingWebhook>(
      db,
      `webhooks.forSending:${size}`,
      (q) =>
        q
          .selectFrom('webhooks')
          .select(['id', 'url', 'secret', 'signature', 'format', 'status'])
          .where('id', 'in', slots(0, size)),
      list,
    );
  },

  async eventPayloads(db: Executor, ids: number[]): Promise<EventPayload[]> {
    const out: EventPayload[] = [];
    for (const chunk of shapedChunks(ids, batchRows)) {
      const size = chunk.length;
      const rows = await runPrepared<EventPayload>(
        db,
        `webhooks.payloads:${size}`,
        (q) => q.selectFrom('events').select(['id', 'payload']).where('id', 'in', slots(0, size)),
        chunk,
      );
      out.push(...rows);
    }
    return out;
  },

  /**
   * Ends deliveries leased under the term `owner` as delivered, counting the attempt; returns the ids that
   * were still so leased (one given back and taken by another dispatcher is that one's to record).
   */
  async markDelivered(db: Executor, ids: number[], owner: number, now: number): Promise<number[]> {
    const done: number[] = [];
    for (const chunk of shapedChunks(ids, batchRows)) {
      const size = chunk.length;
      const rows = await runPrepared<{ id: number }>(
        db,
        `webhooks.delivered:${size}`,
        (q) =>
          q
            .updateTable('webhook_deliveries')
            .set((eb) => ({
              state: as(0),
              attempts: eb('attempts', '+', as(1)),
              lease_until: sql<null>`null`,
              lease_owner: sql<null>`null`,
              updated_at: as(2),
            }))
            .where('id', 'in', slots(5, size))
            .where(checkedOnly('state'), '=', as(3))
            .where('lease_owner', '=', as(4))
            .returning('id'),
        ['delivered', 1, now, 'sending', owner, ...chunk],
      );
      for (const row of rows) done.push(row.id);
    }
    return done;
  },

  /**
   * Counts a failed attempt on a delivery leased under the term `owner` and sets what happens next; false if
   * it is not so leased.
   */
  async markFailed(
    db: Executor,
    id: number,
    owner: number,
    state: 'pending' | 'failed' | 'held',
    nextAttemptAt: number,
    now: number,
  ): Promise<boolean> {
    const rows = await db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        state,
        attempts: eb('attempts', '+', 1),
        next_attempt_at: nextAttemptAt,
        lease_until: null,
        lease_owner: null,
        updated_at: now,
      }))
      .where('id', '=', id)
      .where('state', '=', 'sending')
      .where('lease_owner', '=', owner)
      .returning('id')
      .execute();
    return rows.length > 0;
  },

  /**
   * Gives deliveries leased under the term `owner` back without counting an attempt (their webhook was paused,
   * or we stop).
   */
  async unlease(
    db: Executor,
    ids: number[],
    owner: number,
    state: 'pending' | 'held',
    now: number,
  ): Promise<void> {
    for (const chunk of chunks(ids)) {
      await db
        .updateTable('webhook_deliveries')
        .set({ state, lease_until: null, lease_owner: null, updated_at: now })
        .where('id', 'in', chunk)
        .where(checkedOnly('state'), '=', 'sending')
        .where('lease_owner', '=', owner)
        .execute();
    }
  },

  async insertAttempts(db: Executor, attempts: NewAttempt[]): Promise<void> {
    const rows = attempts.map((a) => attemptColumns.map((c) => a[c]));
    await insertRows(db, 'webhook_attempts', attemptColumns, rows, 200);
  },

  /** Records the last answer of a webhook; `failingSince` null after a success. */
  async setOutcome(
    db: Executor,
    webhookId: number,
    lastHttpCode: number | null,
    failingSince: number | null | 'keep-or-now',
    now: number,
  ): Promise<void> {
    const keep = failingSince === 'keep-or-now';
    await runPrepared(
      db,
      `webhooks.outcome:${keep}`,
      (q) =>
        q
          .updateTable('webhooks')
          .set((eb) => ({
            last_http_code: as(1),
            failing_since: keep ? eb.fn.coalesce('failing_since', sql<number>`${slot(2)}`) : as(2),
            updated_at: as(3),
          }))
          .where('id', '=', as(0)),
      [webhookId, lastHttpCode, keep ? now : failingSince, now],
    );
  },

  webhookStatuses(db: Executor, ids: number[]) {
    return db
      .selectFrom('webhooks')
      .select(['id', 'status', 'failing_since'])
      .where('id', 'in', ids)
      .execute();
  },

  /** Pauses the live webhooks among `ids` that have not succeeded since `cutoff`; returns their ids. */
  async pauseFailing(db: Executor, ids: number[], cutoff: number, now: number): Promise<number[]> {
    const rows = await db
      .updateTable('webhooks')
      .set({ status: 'paused', updated_at: now })
      .where('id', 'in', ids)
      .where('status', '=', 'live')
      .where('failing_since', '<=', cutoff)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  },

  /** A paused webhook's pending deliveries wait, untried, until it is live again. */
  async holdPending(db: Executor, webhookIds: number[], now: number): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'held', updated_at: now })
      .where('webhook_id', 'in', webhookIds)
      .where('state', '=', 'pending')
      .execute();
  },

  /** Held deliveries of a webhook set live again are due at once. */
  async resumeHeld(db: Executor, webhookId: number, now: number): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', next_attempt_at: now, updated_at: now })
      .where('webhook_id', '=', webhookId)
      .where('state', '=', 'held')
      .execute();
  },

  /** Deliveries whose dispatcher stopped mid-send go back to pending. */
  releaseExpiredLeases(db: Executor, now: number): Promise<number> {
    return deliveryQueue.releaseExpired(db, now);
  },

  /**
   * The work waiting, over every account: pending deliveries (how many are due at `now`, the oldest one's
   * creation, the earliest next attempt), leased ones, and events not yet fanned out. Each part reads only
   * its partial index's rows, never the finished deliveries or events.
   */
  async backlog(db: Executor, now: number) {
    const { rows } = await sql<{
      kind: 'pending' | 'sending' | 'events';
      n: number | string;
      due: number | string | null;
      oldest: number | string | null;
      first_due: number | string | null;
    }>`select 'pending' as kind, count(*) as n, sum(case when next_attempt_at <= ${now} then 1 else 0 end) as due,
         min(created_at) as oldest, min(next_attempt_at) as first_due
       from webhook_deliveries where state = 'pending'
       union all
       select 'sending', count(*), 0, null, null from webhook_deliveries where state = 'sending'
       union all
       select 'events', count(*), 0, min(created_at), null from events where fanned_out = 0`.execute(db);
    return rows;
  },

  async insertTest(
    db: Executor,
    row: Pick<Selectable<WebhookDeliveriesTable>, 'webhook_id' | 'account_id' | 'event_type'> & {
      payload: string;
    },
    now: number,
  ): Promise<number> {
    const inserted = await db
      .insertInto('webhook_deliveries')
      .values({
        ...row,
        event_id: null,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        lease_until: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return inserted.id;
  },

  /** A webhook's attempts, newest first, with whether each belongs to a test delivery. */
  attempts(db: Executor, accountId: number, webhookId: number, start: number, length: number) {
    return db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhooks as w', 'w.id', 'a.webhook_id')
      .select([
        'a.id',
        'a.delivery_id',
        'a.event_id',
        'a.event_type',
        'a.attempt',
        'a.http_code',
        'a.error',
        'a.latency_ms',
        'a.attempted_at',
        'a.next_attempt_at',
        'a.request_headers',
        'a.request_body',
        'a.response_body',
      ])
      .where('w.account_id', '=', accountId)
      .where('a.webhook_id', '=', webhookId)
      .orderBy('a.id', 'desc')
      .offset(start)
      .limit(length)
      .execute();
  },

  async countAttempts(db: Executor, accountId: number, webhookId: number): Promise<number> {
    const row = await db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhooks as w', 'w.id', 'a.webhook_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('w.account_id', '=', accountId)
      .where('a.webhook_id', '=', webhookId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Removes a webhook's deliveries and attempt log (with the webhook itself, by the caller). */
  async deleteForWebhook(db: Executor, webhookId: number): Promise<void> {
    await db.deleteFrom('webhook_attempts').where('webhook_id', '=', webhookId).execute();
    await db.deleteFrom('webhook_deliveries').where('webhook_id', '=', webhookId).execute();
  },
};
