import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * A webhook's body format (issue 22): `json` (every webhook so far, and the default) or `form`
 * (application/x-www-form-urlencoded), for receivers written for SMSFactor that read `from` and `message`
 * as form parameters.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('format', 'text', (c) => c.notNull().defaultTo('json'))
    .execute();
}
