import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/**
 * On PostgreSQL, drops the foreign keys checked on every message: a campaign's account (`campaigns`), the
 * ledger line's account (`credit_ledger`), a message's campaign (`messages`) and a part's message
 * (`message_parts`). PostgreSQL checks each inserted row by a query that also locks the referenced row
 * (`FOR KEY SHARE`): per message, a lookup and a row lock written to the table, and on the account row every
 * concurrent send of the account taking a share lock beside the one debit that updates it. Measured before
 * this change, the check cost about as much server time as the insert it guards.
 *
 * The rows these keys guarded are written only where the row they point to is certain: the campaign, its
 * messages and its ledger line in the send's own transaction, after the account was read and debited under
 * its row lock; a part by the transaction that holds its message's row lock (the submit's record). Every
 * delete (retention, erasure, an account's removal) removes the rows that point before the row pointed to.
 * SQLite keeps the keys (checked in-process, they cost little there), so the test suite, which runs every
 * path on both databases, still fails on any write or delete out of that order.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  if (!postgres) return;
  for (const [table, column] of [
    ['campaigns', 'account_id'],
    ['credit_ledger', 'account_id'],
    ['messages', 'campaign_id'],
    ['message_parts', 'message_id'],
  ]) {
    // Found by its column, not its name: the name is PostgreSQL's default, which a restored dump may differ from.
    const { rows } = await sql<{ name: string }>`
      select c.conname as name from pg_constraint c
      join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
      where c.contype = 'f' and c.conrelid = to_regclass(${table}) and a.attname = ${column}`.execute(db);
    for (const { name } of rows) await db.schema.alterTable(table).dropConstraint(name).execute();
  }
}
