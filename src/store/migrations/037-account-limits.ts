import type { ColumnBuilderCallback, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/**
 * Per-account limits (issue 25).
 *
 * `account_limits` (owned by limits): the operator's limits of one account, each column null when the account
 * inherits it (its parent's, else the instance's environment default): `daily_messages`, `monthly_messages`
 * (messages accepted per day and month of TIMEZONE), `requests_per_second` (API requests, all its tokens
 * together), `parts_per_second` (SMS parts its delivery is paced to) and `countries` (ISO codes, comma
 * separated, or `*` for every country). 0 is "no limit" for the four numbers. An account without a row has
 * no limit of its own.
 *
 * `account_pacing` (owned by limits): per paced account, the instant its last accepted part's slot ends: a send
 * queues its messages from there on, and moves it on by its parts, in its transaction.
 *
 * `monthly_message_counts` (owned by campaigns): the messages each account had accepted per month of TIMEZONE
 * (`month` is `yyyy-MM`), the sibling of `daily_message_counts` for the monthly quota.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('account_limits')
    .addColumn('account_id', 'bigint', (c) => c.primaryKey())
    .addColumn('daily_messages', 'bigint')
    .addColumn('monthly_messages', 'bigint')
    .addColumn('requests_per_second', 'integer')
    .addColumn('parts_per_second', 'integer')
    .addColumn('countries', 'text')
    .addColumn('updated_at', 'bigint', notNull)
    .execute();

  await db.schema
    .createTable('account_pacing')
    .addColumn('account_id', 'bigint', (c) => c.primaryKey())
    .addColumn('paced_until', 'bigint', notNull)
    .execute();

  await db.schema
    .createTable('monthly_message_counts')
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('month', 'text', notNull)
    .addColumn('messages', 'bigint', notNull)
    .addPrimaryKeyConstraint('monthly_message_counts_pk', ['account_id', 'month'])
    .execute();
}
