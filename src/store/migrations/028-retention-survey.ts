import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * SMSFactor's retention has a `survey` setting besides the five kinds of 015: it is stored and shown so a
 * client that sets it reads it back. Pigeon keeps no surveys, so the job has nothing of that kind to delete.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('retention')
    .addColumn('survey', 'text', (c) => c.notNull().defaultTo('-1'))
    .execute();
}
