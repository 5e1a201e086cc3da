import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * The SMPP binds up on every process (`smpp_binds`), so that a user's `max_binds` and `tps` hold across several
 * API processes rather than on each: a row per bind, named by the SMPP server (process) that holds it, alive
 * while that server renews it. A server that dies stops renewing, and its binds stop counting.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('smpp_binds')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('smpp_user_id', 'bigint', (c) => c.notNull())
    // The SMPP server holding it: a random id per server, for its renewals and its own clean-up.
    .addColumn('server', 'text', (c) => c.notNull())
    .addColumn('bound_at', 'bigint', (c) => c.notNull())
    .addColumn('alive_until', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('smpp_binds_user')
    .on('smpp_binds')
    .columns(['smpp_user_id', 'alive_until'])
    .execute();
  await db.schema.createIndex('smpp_binds_server').on('smpp_binds').column('server').execute();
}
