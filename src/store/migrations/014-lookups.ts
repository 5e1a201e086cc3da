import type { ColumnBuilderCallback, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/** Each number looked up (POST /lookup), with the provider's answer as JSON, for history and retention. */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('lookups')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('number', 'text', notNull)
    // VALID, INVALID or NPAI (the answer's status.name), and who answered.
    .addColumn('status', 'text', notNull)
    .addColumn('provider', 'text', notNull)
    .addColumn('result', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  // An account's lookups by age: its history, and retention's deletes of the oldest.
  await db.schema
    .createIndex('lookups_account_created')
    .on('lookups')
    .columns(['account_id', 'created_at'])
    .execute();
}
