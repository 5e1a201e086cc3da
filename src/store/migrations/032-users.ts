import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Users of an account (issue 24): people with an e-mail, a password and a role. Every existing account gets
 * one owner user with the account's e-mail and password hash, so its console sign-in keeps working; each
 * console session names the user behind it (the account's owner for sessions opened before); tokens get a
 * scope, `full` for every existing one (SMSFactor's clients unchanged).
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    // Lower case, unique over every account.
    .addColumn('email', 'text', (c) => c.notNull().unique())
    // scrypt, as accounts.password_hash; null until an invited user sets it.
    .addColumn('password_hash', 'text')
    // owner, admin, sender, developer or viewer.
    .addColumn('role', 'text', (c) => c.notNull())
    // The SHA-256 of the one-time link (invitation, reset) while one is open, and when it stops working.
    .addColumn('link_hash', 'text', (c) => c.unique())
    .addColumn('link_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_account').on('users').columns(['account_id', 'id']).execute();
  await sql`insert into users (account_id, email, password_hash, role, created_at)
    select id, email, password_hash, 'owner', created_at from accounts order by id`.execute(db);

  await db.schema.alterTable('console_sessions').addColumn('user_id', 'bigint').execute();
  await sql`update console_sessions set user_id =
    (select u.id from users u where u.account_id = console_sessions.account_id and u.role = 'owner')`.execute(
    db,
  );

  await db.schema
    .alterTable('tokens')
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo('full'))
    .execute();
}
