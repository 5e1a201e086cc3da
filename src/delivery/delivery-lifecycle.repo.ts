// SQL of delivery's data lifecycle: retention's purges of finished messages and old replies, pruning orphan
// receipts, and erasing a phone number from messages, replies, reply fragments and HELP answers. No rules here.

import type { Erasure } from '../shared/erasure.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { accountKey } from '../store/account-key.ts';
import { checkedOnly } from '../store/checked-only.ts';
import type { Executor } from '../store/db.ts';
import { deleteAged, pruneOldest } from '../store/purge.ts';

/** Ids bound per statement. */
const idsPerStatement = 500;

/** States a worker may still send from: an erased number's message in one of them is never sent. */
const unsentStates = ['queued', 'sending', 'held'];

/** The `error` of a message its erasure stopped before it was sent. */
export const erasedBeforeSending = 'erased before it was sent';

export interface ErasedMessage {
  id: number;
  campaign_id: number;
  seq: number;
}

/** States a worker may still act on: retention never deletes such a message. */
const unfinishedStates = ['queued', 'sending', 'held'];

async function deleteMessages(db: Executor, rows: readonly { id: number }[]): Promise<number> {
  if (rows.length === 0) return 0;
  const ids = rows.map((r) => r.id);
  await db.deleteFrom('message_parts').where('message_id', 'in', ids).execute();
  await db.deleteFrom('messages').where('id', 'in', ids).execute();
  return ids.length;
}

export const deliveryLifecycleRepo = {
  /**
   * Retention: deletes up to `limit` of the account's messages due before `before` that are done with (not
   * queued, sending or held), their parts first; returns how many messages went.
   */
  async purgeMessages(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    const rows = await db
      .selectFrom('messages')
      .select('id')
      .where(accountKey, '=', accountId)
      .where('due_at', '<', before)
      .where('state', 'not in', unfinishedStates)
      .limit(limit)
      .execute();
    return deleteMessages(db, rows);
  },

  /** Retention: deletes up to `limit` messages of a campaign that are done with, their parts first. */
  async purgeCampaignMessages(db: Executor, campaignId: number, limit: number): Promise<number> {
    const rows = await db
      .selectFrom('messages')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .where('state', 'not in', unfinishedStates)
      .limit(limit)
      .execute();
    return deleteMessages(db, rows);
  },

  /** Whether a campaign still has a message a worker may send. */
  async hasUnfinished(db: Executor, campaignId: number): Promise<boolean> {
    const row = await db
      .selectFrom('messages')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .where('state', 'in', unfinishedStates)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** Retention: deletes up to `limit` of the account's replies received before `before`; how many. */
  purgeReplies(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    const replies = { table: 'replies', column: 'received_at', account: 'expression' } as const;
    return deleteAged(db, replies, accountId, before, limit);
  },

  /** Up to `limit` orphan receipts received before `before`, from the oldest; how many went. */
  pruneOrphanReceipts(db: Executor, before: number, limit: number): Promise<number> {
    return pruneOldest(db, { table: 'orphan_receipts', dateColumn: 'received_at' }, before, limit);
  },

  /** The messages sent (or to be sent) to the number by the erasure's accounts, through the recipient index. */
  messagesTo(db: Executor, erasure: Erasure): Promise<ErasedMessage[]> {
    let query = db
      .selectFrom('messages')
      .select(['id', 'campaign_id', 'seq'])
      .where('recipient', '=', erasure.number);
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    return query.execute();
  },

  /**
   * Keeps the messages' rows (their parts, state and counters bill and count the campaign) without the
   * person: the recipient becomes the placeholder, and what was written for them (the text with their
   * fields and short links, their gsmsmsid, their list contact) goes. One not sent yet becomes `failed`
   * with DLR 0 (not sent), so no worker sends it and its campaign can finish.
   */
  async anonymizeMessages(db: Executor, ids: readonly number[], placeholder: string, now: number) {
    for (let i = 0; i < ids.length; i += idsPerStatement) {
      const chunk = ids.slice(i, i + idsPerStatement);
      await db
        .updateTable('messages')
        .set({
          state: 'failed',
          dlr_status: DlrStatus.notSent,
          error: erasedBeforeSending,
          lease_until: null,
          updated_at: now,
        })
        .where('id', 'in', chunk)
        .where(checkedOnly('state'), 'in', unsentStates)
        .execute();
      await db
        .updateTable('messages')
        .set({ recipient: placeholder, text: '', gsmsmsid: null, contact_id: null })
        .where('id', 'in', chunk)
        .execute();
    }
  },

  /** Deletes the replies (MO and STOP) the number sent to the erasure's accounts; how many. */
  async deleteRepliesFrom(db: Executor, erasure: Erasure): Promise<number> {
    let query = db.deleteFrom('replies').where('number', '=', erasure.number);
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    return Number((await query.executeTakeFirst()).numDeletedRows);
  },

  /** Deletes when the number's HELPs were last answered for the erasure's accounts (a rate limit's memory). */
  async deleteHelpAnswersTo(db: Executor, erasure: Erasure): Promise<void> {
    let query = db.deleteFrom('help_answers').where('number', '=', erasure.number);
    if (erasure.accountIds) query = query.where('account_id', 'in', erasure.accountIds);
    await query.execute();
  },

  /** Deletes the parts of replies from the number still waiting for their last part; how many. */
  async deleteFragmentsFrom(db: Executor, number: string): Promise<number> {
    const result = await db.deleteFrom('mo_fragments').where('sender', '=', number).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
