import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * Blacklist and NPAI entries get what SMSFactor's reads answer for them: the contact fields info1…info4 given
 * with the number, and the campaign a STOP reply answered (null for a number added through the API). Entries
 * stored before this have neither. Contacts get an index on `(list_id, number, id)`: deduplicating a list and
 * clearing its NPAI numbers are single set-based deletes that probe it, and adding to a list looks its numbers
 * up by it. Blacklist and NPAI pages read an account's entries in id order through `(account_id, id)`.
 */
export async function up(db: AnyDb): Promise<void> {
  for (const table of ['blacklist', 'npai']) {
    for (const column of ['info1', 'info2', 'info3', 'info4']) {
      await db.schema.alterTable(table).addColumn(column, 'text').execute();
    }
    await db.schema.alterTable(table).addColumn('campaign_id', 'bigint').execute();
    await db.schema.createIndex(`${table}_account_id`).on(table).columns(['account_id', 'id']).execute();
  }
  await db.schema
    .createIndex('contacts_list_number')
    .on('contacts')
    .columns(['list_id', 'number', 'id'])
    .execute();
}
