import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Clicks are counted after they are stored, not in the redirect's transaction: the click folder raises
 * `links.clicks` and writes the CLICKER events of the clicks past its cursor, thousands per transaction,
 * then moves the cursor (src/links/README.md). One row per cursor, by name.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('cursors')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .execute();
  // Clicks stored before this were counted, and their events written, in their own transactions.
  const last = await db
    .selectFrom('clicks')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  await db
    .insertInto('cursors')
    .values({ name: 'clicks', position: Number(last?.id ?? 0) })
    .execute();
}
