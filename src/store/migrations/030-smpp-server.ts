import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * The SMPP server (issue 23): an account's SMPP credentials (`smpp_users`), which campaigns were sent by one of
 * them and whether receipts were asked for (`smpp_submits`, one row per submit_sm that became a campaign), and
 * the receipts and replies waiting to go back to that user as deliver_sm (`smpp_outbox`), drained by the
 * process that serves the SMPP binds.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  const id = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
        postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
      );
  await id('smpp_users')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('system_id', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    // Submits per second across the user's binds; 0 for no limit.
    .addColumn('tps', 'integer', (c) => c.notNull())
    .addColumn('max_binds', 'integer', (c) => c.notNull())
    // JSON array of IPs or CIDRs, or null for any address.
    .addColumn('allowed_ips', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('smpp_users_account').on('smpp_users').column('account_id').execute();

  await db.schema
    .createTable('smpp_submits')
    .addColumn('campaign_id', 'bigint', (c) => c.primaryKey())
    .addColumn('smpp_user_id', 'bigint', (c) => c.notNull())
    // The submit_sm's source_addr: the destination of the replies that come back.
    .addColumn('source_addr', 'text', (c) => c.notNull())
    .addColumn('registered_delivery', 'integer', (c) => c.notNull())
    // The ids answered to a long message's earlier parts that asked for a receipt (comma-separated).
    .addColumn('part_ids', 'text')
    // The first 20 characters of the text, for the receipt's `text:` field.
    .addColumn('text_head', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('smpp_submits_created').on('smpp_submits').column('created_at').execute();

  await id('smpp_outbox')
    .addColumn('smpp_user_id', 'bigint', (c) => c.notNull())
    // receipt or mo.
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_addr', 'text', (c) => c.notNull())
    .addColumn('destination_addr', 'text', (c) => c.notNull())
    // A receipt: the Appendix B text; a reply: its text.
    .addColumn('text', 'text', (c) => c.notNull())
    // A receipt's message id and message_state (null for a reply).
    .addColumn('message_id', 'text')
    .addColumn('message_state', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // Past it, nobody bound to take it: dropped.
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('smpp_outbox_user').on('smpp_outbox').columns(['smpp_user_id', 'id']).execute();
}
