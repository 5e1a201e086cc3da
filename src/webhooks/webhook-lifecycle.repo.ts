// SQL of the webhooks capability's data lifecycle: pruning its attempt log, its finished deliveries and the
// delivered events of the outbox, and erasing a phone number from them. No rules here.
import { sql } from 'kysely';
import type { Erasure } from '../shared/erasure.ts';
import { jsonValuePattern } from '../shared/erasure.ts';
import type { Executor } from '../store/db.ts';
import { pruneOldest } from '../store/purge.ts';

/**
 * The predicate of the partial index `webhook_deliveries_finished` (migration 019), written out literally:
 * SQLite uses a partial index only for a query repeating its terms, and a bound parameter repeats nothing.
 */
const finishedDelivery = sql<boolean>`state in ('delivered', 'failed')`;

/** Deliveries still to be sent, or waiting for their paused webhook: their event must stay. */
const unfinishedStates = ['pending', 'sending', 'held'];

/** Ids bound per statement. */
const idsPerStatement = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += idsPerStatement) out.push(items.slice(i, i + idsPerStatement));
  return out;
}

export const webhookLifecycleRepo = {
  /** Up to `limit` attempts made before `before`, from the oldest; how many went. */
  pruneAttempts(db: Executor, before: number, limit: number): Promise<number> {
    return pruneOldest(db, { table: 'webhook_attempts', dateColumn: 'attempted_at' }, before, limit);
  },

  /** Up to `limit` deliveries that finished (delivered, or failed for good) before `before`; how many. */
  async pruneFinishedDeliveries(db: Executor, before: number, limit: number): Promise<number> {
    const result = await db
      .deleteFrom('webhook_deliveries')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where(finishedDelivery)
          .where('updated_at', '<', before)
          .orderBy('updated_at')
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /**
   * Up to `limit` events written before `before` that are delivered: fanned out, and none of their deliveries
   * still pending, being sent or held for a paused webhook (through `webhook_deliveries_event`). One
   * statement, so what it checks is what it deletes.
   */
  async pruneDeliveredEvents(db: Executor, before: number, limit: number): Promise<number> {
    const result = await db
      .deleteFrom('events')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('events as e')
          .select('e.id')
          .where('e.created_at', '<', before)
          .where('e.fanned_out', '=', 1)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('webhook_deliveries as d')
                  .select('d.id')
                  .whereRef('d.event_id', '=', 'e.id')
                  .where('d.state', 'in', unfinishedStates),
              ),
            ),
          )
          .orderBy('e.created_at')
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /**
   * Erases the number: the events of the accounts whose body holds it as a value (a DLR's `destination`, an
   * MO's or STOP's `from`), the deliveries of those events and the test deliveries whose body holds it, and
   * the attempts of those deliveries and any attempt whose logged request or answer holds it. Everything
   * goes: what is left of a webhook's log says nothing of it.
   */
  async eraseNumber(
    db: Executor,
    erasure: Erasure,
  ): Promise<{ events: number; webhook_deliveries: number; webhook_attempts: number }> {
    const pattern = jsonValuePattern(erasure.number);
    const { accountIds } = erasure;
    let eventsQuery = db.selectFrom('events').select('id').where('payload', 'like', pattern);
    if (accountIds) eventsQuery = eventsQuery.where('account_id', 'in', accountIds);
    const eventIds = (await eventsQuery.execute()).map((e) => e.id);

    const deliveryIds: number[] = [];
    for (const chunk of chunks(eventIds)) {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('event_id', 'in', chunk)
        .execute();
      for (const row of rows) deliveryIds.push(row.id);
    }
    let testDeliveries = db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', 'is', null)
      .where('payload', 'like', pattern);
    if (accountIds) testDeliveries = testDeliveries.where('account_id', 'in', accountIds);
    for (const row of await testDeliveries.execute()) deliveryIds.push(row.id);

    // Attempts are found through their webhooks' index (`webhook_attempts_webhook`): those of the accounts.
    let webhooks = db.selectFrom('webhooks').select('id');
    if (accountIds) webhooks = webhooks.where('account_id', 'in', accountIds);
    let attempts = 0;
    for (const chunk of chunks(deliveryIds)) {
      const gone = await db
        .deleteFrom('webhook_attempts')
        .where('webhook_id', 'in', webhooks)
        .where('delivery_id', 'in', chunk)
        .executeTakeFirst();
      attempts += Number(gone.numDeletedRows);
      await db.deleteFrom('webhook_deliveries').where('id', 'in', chunk).execute();
    }
    for (const chunk of chunks(eventIds)) {
      // Attempts name their event too: one whose delivery row was pruned already still goes.
      const gone = await db
        .deleteFrom('webhook_attempts')
        .where('webhook_id', 'in', webhooks)
        .where('event_id', 'in', chunk)
        .executeTakeFirst();
      attempts += Number(gone.numDeletedRows);
      await db.deleteFrom('events').where('id', 'in', chunk).execute();
    }
    // An attempt keeps the body it sent and the answer's excerpt, and outlives its event and delivery when
    // those are pruned first: one that holds the number goes too.
    const logged = await db
      .deleteFrom('webhook_attempts')
      .where('webhook_id', 'in', webhooks)
      .where((eb) =>
        eb.or([eb('request_body', 'like', pattern), eb('response_body', 'like', `%${erasure.number}%`)]),
      )
      .executeTakeFirst();
    attempts += Number(logged.numDeletedRows);
    return { events: eventIds.length, webhook_deliveries: deliveryIds.length, webhook_attempts: attempts };
  },
};
