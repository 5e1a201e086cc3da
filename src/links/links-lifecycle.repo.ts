// SQL of the links capability's data lifecycle: pruning folded clicks, and erasing a recipient from the links
// of the messages sent to them. No rules here.
import type { Executor } from '../store/db.ts';
import { pruneOldest } from '../store/purge.ts';

export const linksLifecycleRepo = {
  /**
   * Up to `limit` clicks made before `before`, from the oldest, never one past `foldedThrough` (the fold's
   * cursor: a click above it is not counted yet). How many went.
   */
  pruneFoldedClicks(db: Executor, foldedThrough: number, before: number, limit: number): Promise<number> {
    return pruneOldest(db, { table: 'clicks', dateColumn: 'clicked_at' }, before, limit, foldedThrough);
  },

  /** The links of one campaign's messages at these positions (`links_campaign` index). */
  async linksOf(db: Executor, campaignId: number, seqs: readonly number[]): Promise<number[]> {
    const rows = await db
      .selectFrom('links')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .where('message_seq', 'in', seqs)
      .execute();
    return rows.map((r) => r.id);
  },

  /**
   * Keeps the links (their counters make the campaign's clicks, their codes stay answered) without what they
   * knew of the recipient: the gsmsmsid and the list contact's fields.
   */
  async forgetRecipient(db: Executor, linkIds: readonly number[]): Promise<void> {
    await db
      .updateTable('links')
      .set({ gsmsmsid: null, info1: null, info2: null, info3: null, info4: null })
      .where('id', 'in', linkIds)
      .execute();
  },

  /** Deletes the clicks of these links (the recipient's device, address and referer); how many. */
  async deleteClicksOf(db: Executor, linkIds: readonly number[]): Promise<number> {
    const result = await db.deleteFrom('clicks').where('link_id', 'in', linkIds).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
