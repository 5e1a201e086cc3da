import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * The webhook attempt log keeps what was exchanged (issue 11, the console's attempt log): the request's
 * headers (JSON) and body as sent, and the first bytes of the answer's body, so an account can see why a
 * receiver refused a delivery. Bounded by the writer (webhook-deliveries.service.ts, http-sender.ts); null
 * on attempts logged before this migration.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('webhook_attempts').addColumn('request_headers', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('request_body', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('response_body', 'text').execute();
}
