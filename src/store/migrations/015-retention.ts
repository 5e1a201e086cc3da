import type { ColumnBuilderCallback, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const keep: ColumnBuilderCallback = (c) => c.notNull().defaultTo('-1');

/**
 * Retention settings (GET/PUT /retention), one row per account that set them: how long each kind of data is
 * kept ("30d", "6m", or "-1" to keep it). An account without a row keeps everything.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('retention')
    .addColumn('account_id', 'bigint', (c) => c.primaryKey())
    .addColumn('message', 'text', keep)
    .addColumn('list', 'text', keep)
    .addColumn('campaign', 'text', keep)
    .addColumn('mo', 'text', keep)
    .addColumn('lookup', 'text', keep)
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The retention job deletes an account's oldest list contacts first.
  await db.schema
    .createIndex('contacts_account_created')
    .on('contacts')
    .columns(['account_id', 'created_at'])
    .execute();
}
