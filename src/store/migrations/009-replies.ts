import type { ColumnBuilderCallback, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/** Events copied per statement: 7 columns each, far below SQLite's 32,766 bound parameters. */
const copyPage = 1000;

/**
 * Replies (MO and STOP) get a table of their own, owned by delivery and written in the transaction of their
 * event: the campaign's reads (`/campaign/:ticket/mo`, `/blacklist`, the `stop` counter) read it instead of
 * the webhook outbox. Replies stored before this are copied once from their events, in event order, so the
 * reads answer what they answered; the copy pages through the events in TypeScript, since SQLite and
 * PostgreSQL read JSON with different functions. The partial index that served those reads on `events` goes.
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('replies')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    // The account and campaign that last wrote to the number: the reply is theirs.
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('campaign_id', 'bigint', notNull)
    // MO or STOP.
    .addColumn('type', 'text', notNull)
    // Who replied, and what.
    .addColumn('number', 'text', notNull)
    .addColumn('text', 'text', notNull)
    // The gsmsmsid of the message the reply answers (the last one sent to the number), if it had one.
    .addColumn('gsmsmsid', 'text')
    .addColumn('received_at', 'bigint', notNull)
    .execute();
  // A campaign's replies of one type in arrival order (its pages), and its STOPs counted.
  await db.schema
    .createIndex('replies_campaign')
    .on('replies')
    .columns(['campaign_id', 'type', 'id'])
    .execute();

  for (let after = 0; ; ) {
    const events: {
      id: number;
      account_id: number;
      campaign_id: number | null;
      type: string;
      payload: string;
      created_at: number;
    }[] = await db
      .selectFrom('events')
      .select(['id', 'account_id', 'campaign_id', 'type', 'payload', 'created_at'])
      .where('type', 'in', ['MO', 'STOP'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(copyPage)
      .execute();
    const replies = events
      // Every reply event names its campaign; one that did not could never be read by a campaign anyway.
      .filter((e) => e.campaign_id !== null)
      .map((e) => {
        const payload = JSON.parse(e.payload) as {
          from?: string;
          message?: string;
          last_message_id?: string;
        };
        return {
          account_id: Number(e.account_id),
          campaign_id: Number(e.campaign_id),
          type: e.type,
          number: payload.from ?? '',
          text: payload.message ?? '',
          gsmsmsid: payload.last_message_id || null,
          received_at: Number(e.created_at),
        };
      });
    if (replies.length > 0) await db.insertInto('replies').values(replies).execute();
    if (events.length < copyPage) break;
    after = Number(events[events.length - 1].id);
  }

  await db.schema.dropIndex('events_campaign').execute();
}
