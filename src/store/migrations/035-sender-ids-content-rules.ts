import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Issue 25, the moderation part: the sender IDs accounts ask for and the operator approves or refuses
 * (`sender_ids`), the content rules that refuse a send or hold its campaign (`content_rules`, instance-wide when
 * `account_id` is null), the accounts whose tokens may call `/operator/*` (`operator_accounts`), and on a
 * campaign held for moderation what held it or why it was refused (`campaigns.moderation_note`). The stored
 * campaign status gains `moderation` and `refused`.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  const id = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
        postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
      );
  await id('sender_ids')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('sender', 'text', (c) => c.notNull())
    // pending, approved or refused.
    .addColumn('state', 'text', (c) => c.notNull())
    // What the customer said of it, and the operator's reason for a refusal.
    .addColumn('note', 'text')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('decided_at', 'bigint')
    .addUniqueConstraint('sender_ids_account_sender', ['account_id', 'sender'])
    .execute();
  await db.schema.createIndex('sender_ids_state').on('sender_ids').columns(['state', 'id']).execute();

  await id('content_rules')
    // null: the rule applies to every account.
    .addColumn('account_id', 'bigint', (c) => c.references('accounts.id'))
    // domain, word or pattern.
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    // refuse or hold.
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('content_rules_account').on('content_rules').column('account_id').execute();

  await db.schema
    .createTable('operator_accounts')
    .addColumn('account_id', 'bigint', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('granted_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('campaigns').addColumn('moderation_note', 'text').execute();
  // The moderation queue reads the campaigns held, oldest first.
  await db.schema
    .createIndex('campaigns_moderation')
    .on('campaigns')
    .column('id')
    .where(sql<boolean>`status = 'moderation'`)
    .execute();
}
