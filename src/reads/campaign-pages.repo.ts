// SQL of one campaign's pages: its messages in send order with their links' clicks, its clicks over time, the
// replies and STOPs it drew, its NPAI numbers, and the list contacts it wrote to. Read only.
import type { Page } from '../shared/paging.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { accountKey } from '../store/account-key.ts';
import type { Executor } from '../store/db.ts';
import { type BucketSize, wallClockBucket } from '../store/wall-clock.ts';
import { reportedStatusSql } from './message-status.ts';

export type ReplyType = 'MO' | 'STOP';

export const campaignPagesRepo = {
  /**
   * A page (offset paging) of the campaign's messages in seq order, through its unique key `(campaign_id,
   * seq)`; only those reporting the DLR code `status` when given (see `reportedStatus`).
   */
  messagesPage(db: Executor, accountId: number, campaignId: number, status: number | undefined, page: Page) {
    let query = db
      .selectFrom('messages')
      .select([
        'id',
        'seq',
        'recipient',
        'gsmsmsid',
        'state',
        'dlr_status',
        'due_at',
        'updated_at',
        'sent_at',
      ])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId);
    if (status !== undefined) query = query.where(reportedStatusSql, '=', status);
    return query.orderBy('seq').limit(page.length).offset(page.start).execute();
  },

  /**
   * Clicks counted (folded) on the links of these messages of one campaign, per message (`links_campaign`
   * index); a message without links, or whose links had no click, is absent.
   */
  async messageClicks(db: Executor, accountId: number, campaignId: number, seqs: readonly number[]) {
    if (seqs.length === 0) return [];
    const rows = await db
      .selectFrom('links')
      .select('message_seq')
      .select((eb) => eb.fn.sum<number>('clicks').as('clicks'))
      .where('campaign_id', '=', campaignId)
      .where('message_seq', 'in', seqs)
      .where('account_id', '=', accountId)
      .groupBy('message_seq')
      .execute();
    return rows.map((r) => ({ seq: Number(r.message_seq), clicks: Number(r.clicks) }));
  },

  /** The first and last stored click of a campaign (`clicks_campaign` index), or undefined without any. */
  async clickSpan(db: Executor, accountId: number, campaignId: number) {
    const row = await db
      .selectFrom('clicks')
      .select((eb) => [
        eb.fn.min<number>('clicked_at').as('first'),
        eb.fn.max<number>('clicked_at').as('last'),
      ])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (row?.first == null || row.last == null) return undefined;
    return { first: Number(row.first), last: Number(row.last) };
  },

  /**
   * A campaign's stored clicks within [from, to] per wall-clock hour or day of `zone` (the bucket's start as
   * wall-clock milliseconds, store/wall-clock.ts): clicks, and distinct messages clicked. Read from the
   * `clicks_campaign` index alone (migration 026), oldest first.
   */
  async clicksPerBucket(
    db: Executor,
    accountId: number,
    campaignId: number,
    zone: string,
    size: BucketSize,
    from: number,
    to: number,
  ) {
    const bucket = wallClockBucket('clicked_at', zone, size, from, to);
    const rows = await db
      .selectFrom('clicks')
      .select((eb) => [
        bucket.as('bucket'),
        eb.fn.countAll<number>().as('clicks'),
        eb.fn.count<number>('message_seq').distinct().as('unique'),
      ])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('clicked_at', '>=', from)
      .where('clicked_at', '<=', to)
      .groupBy(bucket)
      .orderBy(bucket)
      .execute();
    return rows.map((r) => ({
      bucket: Number(r.bucket),
      clicks: Number(r.clicks),
      unique: Number(r.unique),
    }));
  },

  /** A page of a campaign's replies of one type, in arrival order. */
  repliesPage(db: Executor, accountId: number, campaignId: number, type: ReplyType, page: Page) {
    return db
      .selectFrom('replies')
      .select(['number', 'text', 'received_at'])
      .where('campaign_id', '=', campaignId)
      .where('type', '=', type)
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /** How many replies of one type the campaign drew. */
  async countReplies(db: Executor, accountId: number, campaignId: number, type: ReplyType) {
    const row = await db
      .selectFrom('replies')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('type', '=', type)
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page (offset paging) of the campaign's messages whose receipt said the number does not exist, in seq order. */
  npaiPage(db: Executor, accountId: number, campaignId: number, page: Page) {
    return db
      .selectFrom('messages')
      .select(['recipient', 'gsmsmsid', 'contact_id', 'updated_at'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', DlrStatus.invalidDestination)
      .orderBy('seq')
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /** How many of the campaign's messages had a receipt saying the number does not exist. */
  async countNpai(db: Executor, accountId: number, campaignId: number) {
    const row = await db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', DlrStatus.invalidDestination)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Which contact each of `numbers` was when the campaign wrote to it (list sends; null for a plain number). */
  contactsOfRecipients(db: Executor, accountId: number, campaignId: number, numbers: readonly string[]) {
    return db
      .selectFrom('messages')
      .select(['recipient', 'contact_id'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('recipient', 'in', numbers)
      .execute();
  },

  /** The fields of the account's contacts with these ids (a contact deleted since is absent). */
  contactFields(db: Executor, accountId: number, contactIds: readonly number[]) {
    return db
      .selectFrom('contacts')
      .select(['id', 'info1', 'info2', 'info3', 'info4'])
      .where('id', 'in', contactIds)
      .where(accountKey, '=', accountId)
      .execute();
  },

  /** The owner of a campaign, for the operator's `pigeon messages`, which is given only a ticket. */
  ownerOf(db: Executor, campaignId: number) {
    return db.selectFrom('campaigns').select(['account_id']).where('id', '=', campaignId).executeTakeFirst();
  },

  /** One page of a campaign's messages after `afterSeq`, in seq order (keyset paging on the unique key). */
  messagesAfter(db: Executor, accountId: number, campaignId: number, afterSeq: number, limit: number) {
    return db
      .selectFrom('messages')
      .select(['seq', 'recipient', 'gsmsmsid', 'text', 'parts', 'encoding', 'state', 'connector', 'route'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  },
};
