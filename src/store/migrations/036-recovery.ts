import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Recovery, two-factor and sessions (issue 24): a user's TOTP secret (once confirmed), the one being enrolled,
 * the last time step a code was accepted for (a code works once), the pending second step of a sign-in (the
 * SHA-256 of its token, when it stops working, and its wrong codes so far), its recovery codes (hashes, each used once); and what a
 * console session shows its user: when it was last seen, from which address, with which browser.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema.alterTable('users').addColumn('totp_secret', 'text').execute();
  await db.schema.alterTable('users').addColumn('totp_pending_secret', 'text').execute();
  await db.schema.alterTable('users').addColumn('totp_last_step', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('sign_in_hash', 'text').execute();
  await db.schema.alterTable('users').addColumn('sign_in_expires_at', 'bigint').execute();
  await db.schema
    .alterTable('users')
    .addColumn('sign_in_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('users_sign_in').on('users').column('sign_in_hash').unique().execute();

  await db.schema
    .createTable('user_recovery_codes')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('user_recovery_codes_user')
    .on('user_recovery_codes')
    .columns(['user_id', 'code_hash'])
    .unique()
    .execute();

  await db.schema.alterTable('console_sessions').addColumn('last_used_at', 'bigint').execute();
  await db.schema.alterTable('console_sessions').addColumn('ip', 'text').execute();
  await db.schema.alterTable('console_sessions').addColumn('user_agent', 'text').execute();
  await db.schema.createIndex('console_sessions_user').on('console_sessions').column('user_id').execute();
}
