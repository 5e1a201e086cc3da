// SQL of the reads delivery serves only to other capabilities: a campaign's counters, messages, NPAI numbers
// and replies, the account's message and reply history, the credits its sent messages used. Moved here as
// they were, to be replaced by the read-only room src/reads/ and deleted with message-reads.service.ts.
import { sql } from 'kysely';
import type { Page } from '../shared/paging.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { contains } from '../store/contains.ts';
import type { Executor } from '../store/db.ts';
import { accountKey } from './delivery-lifecycle.repo.ts';
import type { ReplyType } from './replies.repo.ts';
import { chunks } from './row-batches.ts';

export const messageReadsRepo = {
  /** Messages of the campaigns per state and receipt status, in one grouped query. */
  stateCounts(db: Executor, accountId: number, campaignIds: readonly number[]) {
    return db
      .selectFrom('messages')
      .select(['campaign_id', 'state', 'dlr_status'])
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max<number>('attempts').as('attempts')])
      .where('account_id', '=', accountId)
      .where('campaign_id', 'in', campaignIds)
      .groupBy(['campaign_id', 'state', 'dlr_status'])
      .execute();
  },

  /** A page (offset paging) of the campaign's messages whose receipt status is `dlrStatus`, in seq order. */
  withStatusPage(db: Executor, accountId: number, campaignId: number, dlrStatus: number, page: Page) {
    return db
      .selectFrom('messages')
      .select(['recipient', 'gsmsmsid', 'contact_id', 'updated_at'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', dlrStatus)
      .orderBy('seq')
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /**
   * A page (offset paging) of the campaign's messages in seq order, through its unique key `(campaign_id,
   * seq)`; only those reporting the DLR code `status` when given (see `reportedStatus`).
   */
  campaignMessagesPage(
    db: Executor,
    accountId: number,
    campaignId: number,
    status: number | undefined,
    page: Page,
  ) {
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

  /** Recipients of the campaign's messages whose receipt status is `dlrStatus`, after `afterSeq` (keyset). */
  withStatusAfter(
    db: Executor,
    accountId: number,
    campaignId: number,
    dlrStatus: number,
    afterSeq: number,
    limit: number,
  ) {
    return db
      .selectFrom('messages')
      .select(['seq', 'recipient'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', dlrStatus)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
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

  /** How many replies of one type each of the campaigns drew. */
  replyCounts(db: Executor, accountId: number, campaignIds: readonly number[], type: ReplyType) {
    return db
      .selectFrom('replies')
      .select('campaign_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', 'in', campaignIds)
      .where('type', '=', type)
      .where('account_id', '=', accountId)
      .groupBy('campaign_id')
      .execute();
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

  /** How many of the campaign's messages have the receipt status `dlrStatus`. */
  async countWithStatus(db: Executor, accountId: number, campaignId: number, dlrStatus: number) {
    const row = await db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('dlr_status', '=', dlrStatus)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** How many replies of one type the campaign drew. */
  async countCampaignReplies(db: Executor, accountId: number, campaignId: number, type: ReplyType) {
    const row = await db
      .selectFrom('replies')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('type', '=', type)
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /**
   * The campaigns of the account that wrote to `number` (through the recipient index), with a message due at
   * or after `dueFrom` when given; at most `limit` of them.
   */
  async campaignsSentTo(
    db: Executor,
    accountId: number,
    number: string,
    dueFrom: number | undefined,
    limit: number,
  ): Promise<number[]> {
    let query = db
      .selectFrom('messages')
      .select('campaign_id')
      .distinct()
      .where('recipient', '=', number)
      .where('account_id', '=', accountId);
    if (dueFrom !== undefined) query = query.where('due_at', '>=', dueFrom);
    const rows = await query.limit(limit).execute();
    return rows.map((r) => Number(r.campaign_id));
  },

  /** How many of the account's messages match the filter (see `messageHistory`). */
  async countMessageHistory(db: Executor, accountId: number, filter: MessageFilter): Promise<number> {
    const row = await messageHistory(db, accountId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the account's messages matching the filter, in the order asked (then by id). */
  messageHistoryPage(db: Executor, accountId: number, filter: MessageFilter, sort: MessageSort, page: Page) {
    return orderMessages(messageHistory(db, accountId, filter), sort)
      .select(historyColumns)
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /** The ids and recipients of the first `limit` messages matching the filter, in the order asked. */
  messageHistoryKeys(
    db: Executor,
    accountId: number,
    filter: MessageFilter,
    sort: MessageSort,
    limit: number,
  ) {
    return orderMessages(messageHistory(db, accountId, filter), sort)
      .select(['id', 'recipient'])
      .limit(limit)
      .execute();
  },

  /** The account's messages with these ids (at most a page of them), in no particular order. */
  messagesByIds(db: Executor, accountId: number, ids: readonly number[]) {
    return db
      .selectFrom('messages')
      .select(historyColumns)
      .where('id', 'in', ids)
      .where('account_id', '=', accountId)
      .execute();
  },

  /** How many replies the account received in the period. */
  async countReplyHistory(db: Executor, accountId: number, period: Period): Promise<number> {
    const row = await replyHistory(db, accountId, period)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the replies the account received in the period, in the order asked (then by id). */
  replyHistoryPage(db: Executor, accountId: number, period: Period, sort: ReplySort, page: Page) {
    const direction = sort.descending ? 'desc' : 'asc';
    const key = { id: 'id', date: 'received_at', text: 'text' } as const;
    let query = replyHistory(db, accountId, period).select([
      'id',
      'campaign_id',
      'number',
      'text',
      'received_at',
    ]);
    if (sort.key !== 'id') query = query.orderBy(key[sort.key], direction);
    return query.orderBy('id', direction).limit(page.length).offset(page.start).execute();
  },

  /**
   * The parts (credits) of the accounts' messages sent within the period, summed per account and country, in
   * grouped statements of at most `maxGroupedAccounts` accounts: read from the partial index of sent messages
   * (`messages_sent`, migration 017) alone, never a message row. `countries` keeps only those countries (null:
   * numbers of no country).
   */
  async sentParts(
    db: Executor,
    accountIds: readonly number[],
    period: Period,
    countries: readonly (string | null)[] | undefined,
  ): Promise<{ account_id: number; country: string | null; parts: number }[]> {
    const out: { account_id: number; country: string | null; parts: number }[] = [];
    for (const chunk of chunks([...accountIds], maxGroupedAccounts)) {
      let query = db
        .selectFrom('messages')
        .select(['account_id', 'country'])
        .select((eb) => eb.fn.sum<number>('parts').as('parts'))
        .where('account_id', 'in', chunk)
        // Repeats the index's predicate, which the bounds below imply anyway.
        .where('sent_at', 'is not', null)
        .where('sent_at', '>=', period.from)
        .where('sent_at', '<=', period.to);
      if (countries !== undefined) {
        const codes = countries.filter((c) => c !== null);
        const none = codes.length < countries.length;
        query = query.where((eb) =>
          eb.or([
            ...(codes.length > 0 ? [eb('country', 'in', codes)] : []),
            ...(none ? [eb('country', 'is', null)] : []),
          ]),
        );
      }
      const rows = await query.groupBy(['account_id', 'country']).execute();
      for (const row of rows)
        out.push({ account_id: Number(row.account_id), country: row.country, parts: Number(row.parts) });
    }
    return out;
  },
};

/** Accounts summed by one statement of `sentParts`. */
const maxGroupedAccounts = 500;

/** A period, both ends included, in ms. */
export interface Period {
  from: number;
  to: number;
}

/** What GET /messages filters on; every field but the period is optional. */
export interface MessageFilter extends Period {
  /** The recipient, normalized. */
  destination?: string;
  /** Held in the text, compared without case for ASCII letters. */
  text?: string;
  /** The reported DLR code (see `reportedStatus`). */
  status?: number;
  /** The recipient begins with these digits (a country's calling code). */
  prefix?: string;
}

export interface MessageSort {
  key: 'id' | 'date' | 'destination' | 'status';
  descending: boolean;
}

export interface ReplySort {
  key: 'id' | 'date' | 'text';
  descending: boolean;
}

const historyColumns = [
  'id',
  'campaign_id',
  'recipient',
  'gsmsmsid',
  'text',
  'parts',
  'state',
  'dlr_status',
  'due_at',
  'updated_at',
  'connector',
  'route',
] as const;

/**
 * The DLR code a message reports: its receipt's, 0 for a cancelled message (never sent), else 1 (sent, no
 * receipt yet: queued, held, being sent or submitted).
 */
export const reportedStatus = (state: string, dlrStatus: number | null): number =>
  state === 'cancelled' ? DlrStatus.notSent : (dlrStatus ?? DlrStatus.sent);

const reportedStatusSql = sql<number>`case when ${sql.ref('state')} = 'cancelled' then ${sql.lit(DlrStatus.notSent)} else coalesce(${sql.ref('dlr_status')}, ${sql.lit(DlrStatus.sent)}) end`;

/** The account's messages due within the period that match the filter. */
function messageHistory(db: Executor, accountId: number, filter: MessageFilter) {
  let query = db
    .selectFrom('messages')
    .where(accountKey, '=', accountId)
    .where('due_at', '>=', filter.from)
    .where('due_at', '<=', filter.to);
  if (filter.destination !== undefined) query = query.where('recipient', '=', filter.destination);
  if (filter.prefix !== undefined) query = query.where('recipient', 'like', `${filter.prefix}%`);
  if (filter.text !== undefined) query = query.where(contains(['text'], filter.text));
  if (filter.status !== undefined) query = query.where(reportedStatusSql, '=', filter.status);
  return query;
}

function orderMessages<Q extends ReturnType<typeof messageHistory>>(query: Q, sort: MessageSort): Q {
  const direction = sort.descending ? 'desc' : 'asc';
  const q =
    sort.key === 'date'
      ? query.orderBy('due_at', direction)
      : sort.key === 'destination'
        ? query.orderBy('recipient', direction)
        : sort.key === 'status'
          ? query.orderBy(reportedStatusSql, direction)
          : query;
  return q.orderBy('id', direction) as Q;
}

/** The replies the account received within the period. */
function replyHistory(db: Executor, accountId: number, period: Period) {
  return db
    .selectFrom('replies')
    .where(accountKey, '=', accountId)
    .where('received_at', '>=', period.from)
    .where('received_at', '<=', period.to);
}
