import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Reply keywords (issue 13). A part of a long reply remembers the connector it came in on, so the sweep that
 * completes a reply later routes it as the last part's arrival would have (null: before this migration, or a
 * transport that names none). `help_answers` holds, per account and number, when a HELP was last answered:
 * one row each, so concurrent HELPs race on its key and at most one answer goes out per interval, and a loop
 * with an answering robot cannot run away. Rows older than the interval mean nothing and are pruned.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('mo_fragments').addColumn('connector', 'text').execute();
  await db.schema
    .createTable('help_answers')
    .addColumn('account_id', 'bigint', (c) => c.notNull())
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('answered_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('help_answers_pkey', ['account_id', 'number'])
    .execute();
}
