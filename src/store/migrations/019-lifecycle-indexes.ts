import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * What the pruning job (src/lifecycle/) and `pigeon erase` need to find their rows without reading a whole
 * table:
 *
 * - `webhook_deliveries_event`: the deliveries of an event. An event is pruned only when none of its
 *   deliveries is still to be sent (pending, sending or held), and an erased event takes its deliveries with
 *   it. `event_id` never changes, so a delivery's steps never rewrite this entry.
 * - `webhook_deliveries_finished`: finished deliveries (delivered or failed) by when they finished. A row
 *   enters it once, at its last step; the queue's own partial indexes keep the unfinished ones. Queries
 *   repeat its predicate literally (`finishedDelivery` in webhook-deliveries.repo.ts) so SQLite uses it.
 * - `events_created`: events by age. Events are appended in time order, so the entries are appended at the
 *   right edge, one per event.
 *
 * Append-only logs whose every old row may go (webhook attempts, clicks below the fold's cursor, orphan
 * receipts) need no index: they are walked from their lowest id, which is their oldest row.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_event')
    .on('webhook_deliveries')
    .column('event_id')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_finished')
    .on('webhook_deliveries')
    .column('updated_at')
    .where(sql<boolean>`state in ('delivered', 'failed')`)
    .execute();
  await db.schema.createIndex('events_created').on('events').column('created_at').execute();
}
