import { type ColumnBuilderCallback, type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/** Webhook delivery: one row per (event, subscribed webhook), and one row per HTTP attempt. */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  const id = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
        postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
      );

  // An event is fanned out to the webhooks live at that moment exactly once: the dispatcher that takes it
  // (row-locked on PostgreSQL) writes its deliveries and sets this flag in one transaction. A flag rather
  // than a cursor on ids, because PostgreSQL sequences commit out of order and a cursor would skip late ones.
  await db.schema
    .alterTable('events')
    .addColumn('fanned_out', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Events written before webhooks were delivered are not sent retroactively.
  await db.updateTable('events').set({ fanned_out: 1 }).execute();
  // Partial: only the events still to fan out are indexed, so the index stays a handful of rows.
  await db.schema
    .createIndex('events_to_fan_out')
    .on('events')
    .column('id')
    .where(sql.ref('fanned_out'), '=', sql.lit(0))
    .execute();

  // A webhook that has failed since `failing_since` (and not succeeded since) is paused after a while.
  await db.schema.alterTable('webhooks').addColumn('failing_since', 'bigint').execute();

  // state: pending (due at next_attempt_at), sending (leased until lease_until), delivered, failed (the
  // schedule ran out), held (its webhook is paused; resumed when it is set live again).
  await id('webhook_deliveries')
    .addColumn('webhook_id', 'bigint', notNull)
    .addColumn('account_id', 'bigint', notNull)
    // Null for a test delivery, which carries its own payload.
    .addColumn('event_id', 'bigint')
    .addColumn('event_type', 'text', notNull)
    .addColumn('payload', 'text')
    .addColumn('state', 'text', notNull)
    .addColumn('attempts', 'integer', notNull)
    .addColumn('next_attempt_at', 'bigint', notNull)
    .addColumn('lease_until', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  // Partial indexes keep the claim and the lease sweep off the (many) finished rows.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('state'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_leased')
    .on('webhook_deliveries')
    .column('lease_until')
    .where(sql.ref('state'), '=', sql.lit('sending'))
    .execute();
  // On the webhook alone: a state in the key would be rewritten at every step of every delivery, for the
  // sake of rare operations (pausing, resuming, deleting a webhook).
  await db.schema
    .createIndex('webhook_deliveries_webhook')
    .on('webhook_deliveries')
    .column('webhook_id')
    .execute();

  await id('webhook_attempts')
    .addColumn('webhook_id', 'bigint', notNull)
    .addColumn('delivery_id', 'bigint', notNull)
    .addColumn('event_id', 'bigint')
    .addColumn('event_type', 'text', notNull)
    .addColumn('attempt', 'integer', notNull)
    // Null when no HTTP answer came (connection failed, timed out, or refused by the URL guard).
    .addColumn('http_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('latency_ms', 'integer', notNull)
    .addColumn('attempted_at', 'bigint', notNull)
    // When the delivery is tried next; null when this attempt ended it.
    .addColumn('next_attempt_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_attempts_webhook')
    .on('webhook_attempts')
    .columns(['webhook_id', 'id'])
    .execute();
}
