// SQL of the parts the SMSC accepted and of the receipts that came before their part was recorded (orphans):
// recording parts, finding the part a receipt answers, closing parts, keeping and adopting orphans. No rules here.
import type { Selectable } from 'kysely';
import { insertRows } from '../store/bulk-insert.ts';
import type { Executor } from '../store/db.ts';
import { runPrepared, shapedChunks, slot, slots } from '../store/prepared.ts';
import type { MessagePartsTable, MessagesTable, OrphanReceiptsTable } from '../store/schema.ts';
import { batchRows, chunks, maxLookupIds } from './row-batches.ts';

const partColumns = ['message_id', 'part_no', 'smsc_id', 'stat', 'dlr_status', 'updated_at'] as const;

/**
 * A part awaiting its receipt, with what the receipt's event needs of its message and the connector its
 * message went out through (null before CONNECTORS_FILE named connectors, migration 021).
 */
export interface OpenPart
  extends Pick<Selectable<MessagePartsTable>, 'id' | 'message_id'>,
    Pick<
      Selectable<MessagesTable>,
      'campaign_id' | 'account_id' | 'recipient' | 'gsmsmsid' | 'parts' | 'connector'
    > {}

/** What a receipt's event needs of an open part's message, and the connector that carried it. */
const openPartMessageColumns = [
  'p.message_id',
  'm.campaign_id',
  'm.account_id',
  'm.recipient',
  'm.gsmsmsid',
  'm.parts',
  'm.connector',
] as const;

export const messagePartsRepo = {
  /** Inserts the parts the SMSC accepted (a whole batch of messages at once). */
  async insertParts(
    db: Executor,
    parts: Pick<Selectable<MessagePartsTable>, 'message_id' | 'part_no' | 'smsc_id'>[],
    now: number,
  ): Promise<void> {
    const rows = parts.map((p) => [p.message_id, p.part_no, p.smsc_id, null, null, now]);
    await insertRows(db, 'message_parts', partColumns, rows, batchRows);
  },

  /** Whether any receipt waits as an orphan (mostly none: then no submit needs to look for its own). */
  async hasOrphans(db: Executor): Promise<boolean> {
    const rows = await runPrepared(
      db,
      'delivery.hasOrphans',
      (q) =>
        q
          .selectFrom('orphan_receipts')
          .select('id')
          .limit(slot(0) as unknown as number),
      [1],
    );
    return rows.length > 0;
  },

  /**
   * The parts still awaiting their receipt under any of `smscIds`, with their SMSC id, what a receipt's
   * event needs of their message and the connector that carried it: one statement for a batch of receipts. The list is padded to a power of
   * two (repeating its last id), so a few compiled shapes serve every batch size.
   */
  async findOpenParts(db: Executor, smscIds: string[]): Promise<(OpenPart & { smsc_id: string })[]> {
    const found: (OpenPart & { smsc_id: string })[] = [];
    for (const ids of shapedChunks(smscIds, maxLookupIds)) {
      const size = ids.length;
      const rows = await runPrepared<OpenPart & { smsc_id: string }>(
        db,
        `delivery.findOpenParts.${size}`,
        (q) =>
          q
            .selectFrom('message_parts as p')
            .innerJoin('messages as m', 'm.id', 'p.message_id')
            .select(['p.id', 'p.smsc_id', ...openPartMessageColumns])
            .where(
              'p.smsc_id',
              'in',
              ids.map((_, i) => slot(i)),
            )
            .where('p.dlr_status', 'is', null),
        ids,
      );
      found.push(...rows);
    }
    return found;
  },

  async updatePart(db: Executor, id: number, stat: string, dlrStatus: number, now: number): Promise<void> {
    await messagePartsRepo.updateParts(db, [id], stat, dlrStatus, now);
  },

  /** The receipts of several parts with the same stat and status, in one statement per chunk. */
  async updateParts(db: Executor, ids: readonly number[], stat: string, dlrStatus: number, now: number) {
    for (const chunk of shapedChunks(ids, maxLookupIds)) {
      const size = chunk.length;
      await runPrepared(
        db,
        `delivery.updateParts.${size}`,
        (q) =>
          q
            .updateTable('message_parts')
            .set({
              stat: slot(0),
              dlr_status: slot(1) as unknown as number,
              updated_at: slot(2) as unknown as number,
            })
            .where('id', 'in', slots(3, size)),
        [stat, dlrStatus, now, ...chunk],
      );
    }
  },

  partsOf(db: Executor, messageId: number) {
    return db
      .selectFrom('message_parts')
      .select(['part_no', 'stat', 'dlr_status'])
      .where('message_id', '=', messageId)
      .orderBy('part_no')
      .execute();
  },

  async insertOrphan(
    db: Executor,
    receipt: Pick<Selectable<OrphanReceiptsTable>, 'smsc_id' | 'stat' | 'err'>,
    now: number,
  ) {
    await db
      .insertInto('orphan_receipts')
      .values({ ...receipt, received_at: now })
      .execute();
  },

  /** Removes and returns the orphan receipts received since `since` for these SMSC ids. */
  async takeOrphans(db: Executor, smscIds: string[], since: number) {
    const found = [];
    for (const chunk of chunks(smscIds)) {
      const rows = await db
        .selectFrom('orphan_receipts')
        .select(['id', 'smsc_id', 'stat', 'err'])
        .where('smsc_id', 'in', chunk)
        .where('received_at', '>=', since)
        .orderBy('id')
        .execute();
      if (rows.length > 0) {
        await db
          .deleteFrom('orphan_receipts')
          .where(
            'id',
            'in',
            rows.map((r) => r.id),
          )
          .execute();
      }
      found.push(...rows);
    }
    return found;
  },

  /** Recent orphan receipts, oldest first. */
  recentOrphans(db: Executor, since: number, limit: number) {
    return db
      .selectFrom('orphan_receipts')
      .select(['id', 'smsc_id', 'stat', 'err'])
      .where('received_at', '>=', since)
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  async deleteOrphans(db: Executor, ids: number[]): Promise<void> {
    for (const chunk of chunks(ids))
      await db.deleteFrom('orphan_receipts').where('id', 'in', chunk).execute();
  },

  async deleteOrphansBefore(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('orphan_receipts').where('received_at', '<', before).execute();
  },
};
