import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * The route and the connector that carried each message (issue 13: several SMSCs), written with the submit's
 * record beside `sent_at`. Both stay null on a message never sent and on the messages sent before this
 * migration. No index: they are read with the message, never searched by.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('messages').addColumn('connector', 'text').execute();
  await db.schema.alterTable('messages').addColumn('route', 'text').execute();
}
