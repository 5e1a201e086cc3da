import { type ColumnBuilderCallback, type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/**
 * The operator's business: prices per destination and postpaid accounts.
 *
 * `prices` (owned by prices): what one SMS part costs, in whole credits, per destination: an ISO alpha-2
 * country (`FR`) or an E.164 number prefix (`3367`), for an account (its sub-accounts inherit it) or for the
 * instance (`account_id` 0, the default list). An account with no row has no list of its own.
 *
 * `accounts.credit_limit` (owned by accounts): null for a prepaid account (today's, the balance never below
 * zero); for a postpaid one, how far below zero the balance may go.
 *
 * `messages.credits` (owned by delivery): what the message was charged, priced once at its send (parts ×
 * the price of its destination); null for a message stored before this migration, which was charged its
 * parts. The partial index of sent messages (migration 017) is made again with it, so consumption is still
 * read from the index alone.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('prices')
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('destination', 'text', notNull)
    .addColumn('credits', 'integer', notNull)
    .addPrimaryKeyConstraint('prices_pk', ['account_id', 'destination'])
    .execute();

  await db.schema.alterTable('accounts').addColumn('credit_limit', 'bigint').execute();

  await db.schema.alterTable('messages').addColumn('credits', 'bigint').execute();
  await db.schema.dropIndex('messages_sent').execute();
  await db.schema
    .createIndex('messages_sent')
    .on('messages')
    .columns(['account_id', 'sent_at', 'country', 'parts', 'credits'])
    .where(sql.ref('sent_at'), 'is not', null)
    .execute();
}
