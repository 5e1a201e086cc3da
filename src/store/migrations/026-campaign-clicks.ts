import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * A campaign's clicks over time (GET /campaign/:ticket/clicks, the console's campaign page): `clicks_campaign`
 * comes back (migration 006 dropped it while no query read it), keyed to answer from the index alone: the
 * campaign and its account, then when and by which recipient. It costs every stored click one more B-tree
 * insert on the redirect's write; without it, the chart of one campaign read every click of every campaign
 * kept (PRUNE_CLICKS_AFTER, 30 days by default).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createIndex('clicks_campaign')
    .on('clicks')
    .columns(['campaign_id', 'account_id', 'clicked_at', 'message_seq'])
    .execute();
}
