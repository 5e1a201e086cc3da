import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/** Events about a campaign's messages (receipts, and replies to them) name it, for the campaign's reads. */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('events').addColumn('campaign_id', 'bigint').execute();
  await db.schema
    .createIndex('events_campaign')
    .on('events')
    .columns(['campaign_id', 'type', 'id'])
    .execute();
}
