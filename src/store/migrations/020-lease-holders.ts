import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Leases held by a process rather than by each row (store/lease-holder.ts). A worker registers a term in
 * `lease_holders` and renews it with one UPDATE every few seconds; the messages and webhook deliveries it
 * leases name that term in `lease_owner`. When the term is not renewed (the process died or froze), every
 * row it held is claimable again at the next sweep, within seconds instead of a row lease's minutes.
 *
 * No index on `lease_owner`: the sweep reaches leased rows through the indexes it already had (the `state`
 * prefix of `messages_due`, the partial `webhook_deliveries_leased`), so claiming and recording, the hot
 * path, keep the indexes they had.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('lease_holders')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    // Which queue the term leases rows of: `messages` or `webhook_deliveries`.
    .addColumn('queue', 'text', (c) => c.notNull())
    // Who holds it, for an operator reading the table: host name and process id.
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('messages').addColumn('lease_owner', 'bigint').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_owner', 'bigint').execute();
}
