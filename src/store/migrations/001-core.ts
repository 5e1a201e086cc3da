import type { ColumnBuilderCallback, CreateTableBuilder, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/** Integer primary key: INTEGER (the rowid alias) on SQLite, bigserial on PostgreSQL. */
function withId(db: AnyDb, postgres: boolean, table: string): CreateTableBuilder<string, never> {
  return db.schema
    .createTable(table)
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    );
}

const notNull: ColumnBuilderCallback = (c) => c.notNull();

export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await withId(db, postgres, 'accounts')
    .addColumn('parent_id', 'bigint', (c) => c.references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', notNull)
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('company', 'text')
    .addColumn('credits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('unlimited', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('accounts_parent').on('accounts').column('parent_id').execute();

  await withId(db, postgres, 'credit_ledger')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('delta', 'bigint', notNull)
    .addColumn('balance_after', 'bigint', notNull)
    .addColumn('reason', 'text', notNull)
    .addColumn('campaign_id', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema
    .createIndex('credit_ledger_account')
    .on('credit_ledger')
    .columns(['account_id', 'id'])
    .execute();

  await withId(db, postgres, 'tokens')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', notNull)
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint')
    .addColumn('allowed_ips', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('tokens_account').on('tokens').column('account_id').execute();

  await db.schema
    .createTable('balance_notifications')
    .addColumn('account_id', 'bigint', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('alert_trigger', 'text', notNull)
    .addColumn('alert_email', 'text', notNull)
    .addColumn('alert_gsm', 'text', notNull)
    .addColumn('email', 'text', notNull)
    .addColumn('phone_number', 'text', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();

  await withId(db, postgres, 'webhooks')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('type', 'text', notNull)
    .addColumn('url', 'text', notNull)
    .addColumn('signature', 'text')
    .addColumn('secret', 'text', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('last_http_code', 'integer')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await db.schema
    .createIndex('webhooks_account_type')
    .on('webhooks')
    .columns(['account_id', 'type'])
    .execute();

  await withId(db, postgres, 'lists')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('lists_account').on('lists').column('account_id').execute();

  await withId(db, postgres, 'contacts')
    .addColumn('list_id', 'bigint', (c) => c.notNull().references('lists.id').onDelete('cascade'))
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('number', 'text', notNull)
    .addColumn('info1', 'text')
    .addColumn('info2', 'text')
    .addColumn('info3', 'text')
    .addColumn('info4', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('contacts_list').on('contacts').columns(['list_id', 'id']).execute();

  for (const table of ['blacklist', 'npai']) {
    await withId(db, postgres, table)
      .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
      .addColumn('number', 'text', notNull)
      .addColumn('created_at', 'bigint', notNull)
      .addUniqueConstraint(`${table}_account_number`, ['account_id', 'number'])
      .execute();
  }

  await withId(db, postgres, 'campaigns')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('billed_account_id', 'bigint', notNull)
    .addColumn('sender', 'text')
    .addColumn('text', 'text', notNull)
    .addColumn('pushtype', 'text', notNull)
    .addColumn('unicode', 'integer', notNull)
    .addColumn('cost', 'bigint', notNull)
    .addColumn('total', 'integer', notNull)
    .addColumn('sent', 'integer', notNull)
    .addColumn('blacklisted', 'integer', notNull)
    .addColumn('duplicated', 'integer', notNull)
    .addColumn('invalid', 'integer', notNull)
    .addColumn('npai', 'integer', notNull)
    .addColumn('not_allowed', 'integer', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('due_at', 'bigint', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema
    .createIndex('campaigns_account')
    .on('campaigns')
    .columns(['account_id', 'created_at'])
    .execute();

  await withId(db, postgres, 'messages')
    .addColumn('campaign_id', 'bigint', (c) => c.notNull().references('campaigns.id'))
    .addColumn('seq', 'integer', notNull)
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('recipient', 'text', notNull)
    .addColumn('gsmsmsid', 'text')
    .addColumn('contact_id', 'bigint')
    .addColumn('text', 'text', notNull)
    .addColumn('parts', 'integer', notNull)
    .addColumn('encoding', 'text', notNull)
    .addColumn('state', 'text', notNull)
    .addColumn('due_at', 'bigint', notNull)
    .addColumn('lease_until', 'bigint')
    .addColumn('smsc_id', 'text')
    .addColumn('dlr_status', 'integer')
    .addColumn('updated_at', 'bigint', notNull)
    .addUniqueConstraint('messages_campaign_seq', ['campaign_id', 'seq'])
    .execute();
  await db.schema.createIndex('messages_due').on('messages').columns(['state', 'due_at']).execute();

  await withId(db, postgres, 'links')
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('campaign_id', 'bigint', notNull)
    .addColumn('message_seq', 'integer', notNull)
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('long_url', 'text', notNull)
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('links_campaign').on('links').columns(['campaign_id', 'message_seq']).execute();

  await withId(db, postgres, 'clicks')
    .addColumn('link_id', 'bigint', notNull)
    .addColumn('campaign_id', 'bigint', notNull)
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('message_seq', 'integer', notNull)
    .addColumn('clicked_at', 'bigint', notNull)
    .addColumn('user_agent', 'text')
    .addColumn('referer', 'text')
    .addColumn('ip', 'text')
    .execute();
  await db.schema
    .createIndex('clicks_campaign')
    .on('clicks')
    .columns(['campaign_id', 'clicked_at'])
    .execute();
  await db.schema.createIndex('clicks_link').on('clicks').column('link_id').execute();
}
