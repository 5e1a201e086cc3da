import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * The ids the SMPP server answered to the earlier parts of a long message (`smpp_parts`), each with the campaign
 * the whole message became, so that a query_sm or a cancel_sm by any part's id finds it. Ids come from each
 * process's clock: two processes may answer the same id, so the key is the id and its campaign.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('smpp_parts')
    .addColumn('part_id', 'bigint', (c) => c.notNull())
    .addColumn('campaign_id', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('smpp_parts_pk', ['part_id', 'campaign_id'])
    .execute();
  await db.schema.createIndex('smpp_parts_created').on('smpp_parts').column('created_at').execute();
}
