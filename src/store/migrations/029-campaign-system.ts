import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * A campaign the service queues itself (a balance-alert SMS, a HELP keyword's answer) is the operator's
 * message, not the customer's campaign: `system` 1 keeps it out of the customer's campaign reads
 * (GET /campaigns, GET /campaign/:ticket). Every campaign stored before was the customer's but for those, which
 * stay as they were: an old alert SMS is told apart by nothing reliable, and a row rewrite of every campaign
 * would cost more than one stray line in a history.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('campaigns')
    .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
