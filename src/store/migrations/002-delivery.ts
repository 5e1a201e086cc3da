import type { ColumnBuilderCallback, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  const id = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
        postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
      );

  // One row per SMS part accepted by the SMSC: receipts arrive per part, under the SMSC's id.
  await id('message_parts')
    .addColumn('message_id', 'bigint', (c) => c.notNull().references('messages.id'))
    .addColumn('part_no', 'integer', notNull)
    .addColumn('smsc_id', 'text', notNull)
    .addColumn('stat', 'text')
    .addColumn('dlr_status', 'integer')
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('message_parts_smsc').on('message_parts').column('smsc_id').execute();
  await db.schema.createIndex('message_parts_message').on('message_parts').column('message_id').execute();

  // Receipts whose part is not recorded yet (a receipt can overtake the record of its submit, or belong to
  // a message this database never sent); matched when the part is recorded, dropped after the validity.
  await id('orphan_receipts')
    .addColumn('smsc_id', 'text', notNull)
    .addColumn('stat', 'text', notNull)
    .addColumn('err', 'text')
    .addColumn('received_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('orphan_receipts_smsc').on('orphan_receipts').column('smsc_id').execute();

  // Parts of concatenated MO messages until the last one arrives.
  await id('mo_fragments')
    .addColumn('sender', 'text', notNull)
    .addColumn('recipient', 'text', notNull)
    .addColumn('ref', 'integer', notNull)
    .addColumn('total', 'integer', notNull)
    .addColumn('seq', 'integer', notNull)
    .addColumn('text', 'text', notNull)
    .addColumn('received_at', 'bigint', notNull)
    .addUniqueConstraint('mo_fragments_part', ['sender', 'recipient', 'ref', 'seq'])
    .execute();

  // The outbox: every DLR, MO, STOP, CLICKER and BALANCE_ALERT, written with the change it reports.
  await id('events')
    .addColumn('account_id', 'bigint', notNull)
    .addColumn('type', 'text', notNull)
    .addColumn('payload', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('events_account').on('events').columns(['account_id', 'id']).execute();

  await db.schema
    .alterTable('messages')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('messages').addColumn('error', 'text').execute();
  // Replies are attributed to the account that last wrote to the number.
  await db.schema.createIndex('messages_recipient').on('messages').columns(['recipient', 'id']).execute();
}
