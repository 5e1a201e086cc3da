import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * The console's sign-ins (issue 11): one row per session, found by the hash of its cookie (the cookie
 * itself is never stored), with the CSRF token its page must echo on every change and the account whose
 * view it shows (the signed-in account, or one of its sub-accounts after a switch). In the database, so
 * every API process knows every session.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('session_hash', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', 'bigint', (c) => c.notNull())
    .addColumn('acting_account_id', 'bigint', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('console_sessions_expires')
    .on('console_sessions')
    .column('expires_at')
    .execute();
  await db.schema
    .createIndex('console_sessions_account')
    .on('console_sessions')
    .column('account_id')
    .execute();
}
