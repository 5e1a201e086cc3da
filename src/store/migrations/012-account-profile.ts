import type { Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/** The profile fields POST /account sets and GET /account answers; null while unset. */
const profileColumns = [
  'type',
  'phone',
  'address1',
  'address2',
  'zip',
  'city',
  'country_code',
  'sender',
  'description',
] as const;

/**
 * Accounts get the profile SMSFactor's account reads answer (the company type, the postal address, the
 * country, the default sender, a description), and `locked`: 1 while the parent account has locked a
 * sub-account (its tokens and credentials answer -1, its queued messages are held). Accounts stored before
 * this have no profile and are not locked.
 */
export async function up(db: AnyDb): Promise<void> {
  for (const column of profileColumns) {
    await db.schema.alterTable('accounts').addColumn(column, 'text').execute();
  }
  await db.schema
    .alterTable('accounts')
    .addColumn('locked', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
