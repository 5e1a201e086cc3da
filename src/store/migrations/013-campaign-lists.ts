import { type ColumnBuilderCallback, type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/**
 * The campaign reads in SMSFactor's shapes. `campaign_lists` keeps the lists a campaign was sent to (its
 * `lists:[{id}]`), written by the send's transaction; no foreign key to `lists`, since a deleted list is still
 * the list the campaign used. Campaigns sent to lists before this get their rows once from their messages'
 * contacts (a campaign all of whose contacts were filtered out or deleted since has none to give).
 *
 * Three indexes serve the history reads, each scoped by account and bounded by a period: `/campaigns` by due
 * date, `/messages` by its messages' due date, `/messages/mo` by the replies' arrival. The two on delivery's
 * tables are keyed on the expression `account_id + 0`, which only those reads write: SQLite keeps no
 * statistics, and an index leading with plain `account_id` won its planner over the campaign's own index for
 * the queries that name a campaign and its account (counters, cancel, STOP counts), turning a read of one
 * campaign into a scan of the whole account. PostgreSQL matches the same expression.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('campaign_lists')
    .addColumn('campaign_id', 'bigint', notNull)
    .addColumn('list_id', 'bigint', notNull)
    .addColumn('account_id', 'bigint', notNull)
    .addPrimaryKeyConstraint('campaign_lists_pk', ['campaign_id', 'list_id'])
    .execute();

  await db
    .insertInto('campaign_lists')
    .columns(['campaign_id', 'list_id', 'account_id'])
    .expression(
      db
        .selectFrom('messages as m')
        .innerJoin('contacts as c', (join) =>
          join.onRef('c.id', '=', 'm.contact_id').onRef('c.account_id', '=', 'm.account_id'),
        )
        .select(['m.campaign_id', 'c.list_id', 'm.account_id'])
        .distinct(),
    )
    .execute();

  await db.schema
    .createIndex('campaigns_account_due')
    .on('campaigns')
    .columns(['account_id', 'due_at', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_account_due')
    .on('messages')
    .expression(sql`(account_id + 0), due_at, id`)
    .execute();
  await db.schema
    .createIndex('replies_account_received')
    .on('replies')
    .expression(sql`(account_id + 0), received_at, id`)
    .execute();
}
