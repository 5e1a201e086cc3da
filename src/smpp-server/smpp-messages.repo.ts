// SQL for what the SMPP server keeps of its messages: the campaigns its users sent (`smpp_submits`), the ids
// answered to the earlier parts of long ones (`smpp_parts`) and the receipts and replies waiting for a bind
// (`smpp_outbox`). No rules here.
import type { Insertable, Selectable } from 'kysely';
import { insertRows } from '../store/bulk-insert.ts';
import type { Executor } from '../store/db.ts';
import type { SmppOutboxTable, SmppPartsTable, SmppSubmitsTable } from '../store/schema.ts';

export type SmppSubmitRow = Selectable<SmppSubmitsTable>;
export type SmppPartRow = Selectable<SmppPartsTable>;
export type SmppOutboxRow = Selectable<SmppOutboxTable>;
export type NewOutboxRow = Omit<Insertable<SmppOutboxTable>, 'id'>;

const outboxColumns = [
  'smpp_user_id',
  'kind',
  'source_addr',
  'destination_addr',
  'text',
  'message_id',
  'message_state',
  'created_at',
  'expires_at',
] as const;

export const smppMessagesRepo = {
  async insertSubmit(db: Executor, row: SmppSubmitRow): Promise<void> {
    await db.insertInto('smpp_submits').values(row).execute();
  },

  /** The submit of `campaignId` by the SMPP user `userId`, if it is still kept. */
  submitOf(db: Executor, campaignId: number, userId: number): Promise<SmppSubmitRow | undefined> {
    return db
      .selectFrom('smpp_submits')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('smpp_user_id', '=', userId)
      .executeTakeFirst();
  },

  /** The ids answered to the earlier parts of a long message, with the campaign it became. */
  async insertParts(db: Executor, rows: readonly SmppPartRow[]): Promise<void> {
    if (rows.length === 0) return;
    await db
      .insertInto('smpp_parts')
      .values([...rows])
      .execute();
  },

  /** The campaigns an earlier part's id was answered for (one, unless two processes answered the same id). */
  async campaignsOfPart(db: Executor, partId: number): Promise<number[]> {
    const rows = await db
      .selectFrom('smpp_parts')
      .select('campaign_id')
      .where('part_id', '=', partId)
      .execute();
    return rows.map((r) => Number(r.campaign_id));
  },

  /** The submits among `campaignIds` (most campaigns were not sent over SMPP: none of theirs). */
  submitsOf(db: Executor, campaignIds: readonly number[]): Promise<SmppSubmitRow[]> {
    if (campaignIds.length === 0) return Promise.resolve([]);
    return db.selectFrom('smpp_submits').selectAll().where('campaign_id', 'in', campaignIds).execute();
  },

  async insertOutbox(db: Executor, rows: readonly NewOutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    await insertRows(
      db,
      'smpp_outbox',
      outboxColumns,
      rows.map((r) => outboxColumns.map((c) => r[c] ?? null)),
      500,
    );
  },

  /** The oldest `limit` rows waiting for one of `userIds`, unexpired. */
  pending(db: Executor, userIds: readonly number[], now: number, limit: number): Promise<SmppOutboxRow[]> {
    if (userIds.length === 0) return Promise.resolve([]);
    return db
      .selectFrom('smpp_outbox')
      .selectAll()
      .where('smpp_user_id', 'in', userIds)
      .where('expires_at', '>', now)
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  async deleteOutbox(db: Executor, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await db.deleteFrom('smpp_outbox').where('id', 'in', ids).execute();
  },

  /** Deletes up to `limit` outbox rows expired by `now`; how many. */
  async pruneOutbox(db: Executor, now: number, limit: number): Promise<number> {
    const deleted = await db
      .deleteFrom('smpp_outbox')
      .where('id', 'in', (q) =>
        q.selectFrom('smpp_outbox').select('id').where('expires_at', '<=', now).limit(limit),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  },

  /** Deletes up to `limit` submits older than `before`; how many. */
  async pruneParts(db: Executor, before: number, limit: number): Promise<number> {
    const deleted = await db
      .deleteFrom('smpp_parts')
      .where((eb) =>
        eb(
          eb.refTuple('part_id', 'campaign_id'),
          'in',
          eb
            .selectFrom('smpp_parts')
            .select(['part_id', 'campaign_id'])
            .where('created_at', '<', before)
            .limit(limit)
            .$asTuple('part_id', 'campaign_id'),
        ),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  },

  async pruneSubmits(db: Executor, before: number, limit: number): Promise<number> {
    const deleted = await db
      .deleteFrom('smpp_submits')
      .where('campaign_id', 'in', (q) =>
        q.selectFrom('smpp_submits').select('campaign_id').where('created_at', '<', before).limit(limit),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  },

  /** Deletes the outbox rows from `number` (a receipt's recipient, a reply's sender), of `userIds` or all. */
  async eraseNumber(
    db: Executor,
    number: string,
    accountIds: readonly number[] | undefined,
  ): Promise<number> {
    let query = db.deleteFrom('smpp_outbox').where('source_addr', '=', number);
    if (accountIds !== undefined) {
      if (accountIds.length === 0) return 0;
      query = query.where('smpp_user_id', 'in', (q) =>
        q.selectFrom('smpp_users').select('id').where('account_id', 'in', accountIds),
      );
    }
    const deleted = await query.executeTakeFirst();
    return Number(deleted.numDeletedRows);
  },

  /** A deleted user's rows. */
  async deleteOfUser(db: Executor, userId: number): Promise<void> {
    await db.deleteFrom('smpp_outbox').where('smpp_user_id', '=', userId).execute();
    await db
      .deleteFrom('smpp_parts')
      .where('campaign_id', 'in', (q) =>
        q.selectFrom('smpp_submits').select('campaign_id').where('smpp_user_id', '=', userId),
      )
      .execute();
    await db.deleteFrom('smpp_submits').where('smpp_user_id', '=', userId).execute();
  },
};
