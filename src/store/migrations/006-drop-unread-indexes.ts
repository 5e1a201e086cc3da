import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Indexes no query reads, on the two tables every click writes: each cost a B-tree insert per click on the
 * redirect path for nothing. One comes back with the first query that needs it.
 */
export async function up(db: AnyDb): Promise<void> {
  for (const name of ['clicks_campaign', 'clicks_link', 'events_account']) {
    await db.schema.dropIndex(name).ifExists().execute();
  }
}
