import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * On PostgreSQL, fills new pages of `message_parts` only to 40 %. A part is written at its submit and updated
 * once, by its receipt, in columns no index holds: PostgreSQL can then write the new version on the same page
 * without a new entry in any of the table's three indexes (a HOT update), but only where the page has room
 * for it. Parts are written and their receipts applied a few hundred to a statement, so full pages left room
 * for a few of them at most, and the rest each wrote three index entries. The new version is a little longer
 * than the part was (its stat and status filled), so a page keeps more than half free for every receipt of
 * its parts to fit; once updated, the table is about as large as when each new version went to another page.
 * SQLite updates in place and has no such setting. Only pages written from now on are laid out this way.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  if (!postgres) return;
  await sql`alter table message_parts set (fillfactor = 40)`.execute(db);
}
