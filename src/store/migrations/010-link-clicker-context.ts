import type { ExpressionBuilder, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: as above.
type AnyEb = ExpressionBuilder<any, 'links'>;

/**
 * A link keeps what its CLICKER events tell of its recipient (the message's gsmsmsid, the list contact's
 * info1…info4), handed over by campaigns when it stores the link, instead of the fold reading them from
 * the messages and contacts of other capabilities. `clicker` is 1 for a link whose clicks raise CLICKER
 * events: every link stored with its message, the default. Links stored before this get their context once
 * from their message and its contact (plain correlated subqueries: the same SQL on SQLite and PostgreSQL); a
 * link without a message gets `clicker` 0 and still raises no CLICKER event.
 */
export async function up(db: AnyDb): Promise<void> {
  for (const column of ['gsmsmsid', 'info1', 'info2', 'info3', 'info4']) {
    await db.schema.alterTable('links').addColumn(column, 'text').execute();
  }
  // 1 by default: every link is stored with its message from now on, and inserts leave the column out.
  await db.schema
    .alterTable('links')
    .addColumn('clicker', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();

  const message = (eb: AnyEb) =>
    eb
      .selectFrom('messages as m')
      .whereRef('m.campaign_id', '=', 'links.campaign_id')
      .whereRef('m.seq', '=', 'links.message_seq');
  await db
    .updateTable('links')
    .set({ clicker: 0 })
    .where((eb) => eb.not(eb.exists(message(eb).select('m.id'))))
    .execute();
  await db
    .updateTable('links')
    .set((eb) => ({ gsmsmsid: message(eb).select('m.gsmsmsid') }))
    .where((eb) => eb.exists(message(eb).select('m.id')))
    .execute();

  const contact = (eb: AnyEb) => message(eb).innerJoin('contacts as c', 'c.id', 'm.contact_id');
  await db
    .updateTable('links')
    .set((eb) => ({
      info1: contact(eb).select('c.info1'),
      info2: contact(eb).select('c.info2'),
      info3: contact(eb).select('c.info3'),
      info4: contact(eb).select('c.info4'),
    }))
    .where((eb) => eb.exists(contact(eb).select('c.id')))
    .execute();
}
