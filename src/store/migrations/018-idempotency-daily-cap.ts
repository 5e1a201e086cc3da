import type { ColumnBuilderCallback, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/**
 * `idempotency_keys` (owned by idempotency): one row per account and `Idempotency-Key`. The primary key on
 * (account_id, key) is what makes a duplicate impossible: two requests with one key, in one process or two,
 * cannot both insert it, so only one of them ever runs the send. While the request runs, the row is a claim
 * with a lease (`claim`, `lease_until`) renewed by its runner; the answer (`status`, `http_code`, `response`)
 * is written in the send's own transaction, so a campaign is never stored without it. A runner that dies
 * leaves only a lease, which expires: the key is never stuck. Rows are pruned by `created_at` after 24 h.
 *
 * `daily_message_counts` (owned by campaigns): the messages each account had accepted per day of TIMEZONE
 * (`day` is `yyyy-MM-dd`), incremented in the send's transaction when DAILY_MESSAGE_LIMIT is set, so the cap
 * is exact under concurrency without scanning messages.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('key', 'text', notNull)
    // The route (`POST /send`) and the SHA-256 of the request's canonical form, to tell a retry from reuse.
    .addColumn('route', 'text', notNull)
    .addColumn('request_hash', 'text', notNull)
    // running (claimed: `claim` and `lease_until` say by whom and until when) or done (the answer is stored).
    .addColumn('state', 'text', notNull)
    .addColumn('claim', 'text')
    .addColumn('lease_until', 'bigint')
    // The first answer: its envelope status, HTTP code and body (JSON).
    .addColumn('status', 'integer')
    .addColumn('http_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
  // The pruning of keys older than 24 h reads the oldest first.
  await db.schema
    .createIndex('idempotency_keys_created')
    .on('idempotency_keys')
    .column('created_at')
    .execute();

  await db.schema
    .createTable('daily_message_counts')
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('messages', 'bigint', notNull)
    .addPrimaryKeyConstraint('daily_message_counts_pk', ['account_id', 'day'])
    .execute();
}
