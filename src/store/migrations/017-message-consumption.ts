import { type Kysely, sql } from 'kysely';
import { countryOf } from '../../sms/numbers.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

/** Messages read and updated per page of the backfill: bounded memory and statements whatever the table holds. */
const backfillPage = 2000;

/**
 * GET /metrics/consumption counts what was actually sent: a message gets `sent_at` (when the SMSC accepted
 * every part of it, the time its submit was recorded) and `country` (the recipient's ISO alpha-2 country, null
 * when the numbering plan tells none), both written by the submit's record, never by the send: the send path
 * stays as it was, and a message never sent (cancelled, refused, expired before its submit) keeps both null.
 *
 * The index holds only sent messages (partial on `sent_at is not null`): queued messages cost it nothing, and
 * no other query can take it (only a query bounding `sent_at` implies its predicate). It covers the grouped
 * read (account, period, country, parts), so the sum is read from the index alone.
 *
 * Messages already submitted (an SMSC id) get the same fields, a page at a time in id order: the country from
 * the number as the receipts' events tell it, and the time from what the row kept: a message still
 * `submitted` was last written by its submit's record, a final one by its receipt, so its due time is taken,
 * the closest earlier moment known.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('messages').addColumn('sent_at', 'bigint').execute();
  await db.schema.alterTable('messages').addColumn('country', 'text').execute();

  for (let after = 0; ; ) {
    const rows: { id: number; recipient: string }[] = await db
      .selectFrom('messages')
      .select(['id', 'recipient'])
      .where('smsc_id', 'is not', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(backfillPage)
      .execute();
    const byCountry = new Map<string | null, number[]>();
    for (const row of rows) {
      const country = countryOf(row.recipient) ?? null;
      const ids = byCountry.get(country);
      if (ids) ids.push(Number(row.id));
      else byCountry.set(country, [Number(row.id)]);
    }
    for (const [country, ids] of byCountry) {
      await db
        .updateTable('messages')
        .set({
          country,
          sent_at: sql`case when ${sql.ref('state')} = 'submitted' then ${sql.ref('updated_at')} else ${sql.ref('due_at')} end`,
        })
        .where('id', 'in', ids)
        .execute();
    }
    if (rows.length < backfillPage) break;
    after = Number(rows[rows.length - 1].id);
  }

  await db.schema
    .createIndex('messages_sent')
    .on('messages')
    .columns(['account_id', 'sent_at', 'country', 'parts'])
    .where(sql.ref('sent_at'), 'is not', null)
    .execute();
}
