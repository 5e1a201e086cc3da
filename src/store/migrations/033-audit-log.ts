import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * The audit log (issue 24): one row per change and per console sign-in, written in the transaction of the
 * change it reports, never updated; only retention deletes. One index, `(account_id, id)`: the reads go newest
 * first per account, and retention takes an account's oldest entries by id (their `at` grows with it). Every
 * send writes an entry, so a second index (on `at`) would cost each send one more b-tree insert.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('account_id', 'bigint', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_label', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('object_type', 'text')
    .addColumn('object_id', 'text')
    .addColumn('ip', 'text')
    .execute();
  await db.schema.createIndex('audit_log_account_id').on('audit_log').columns(['account_id', 'id']).execute();
}
