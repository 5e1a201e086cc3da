// SQL of the account's message and reply history (GET /messages, GET /messages/mo): a period of one account's
// messages or replies through the indexes on `(account_id + 0, due_at, id)` and `(account_id + 0,
// received_at, id)` (migration 013), and the campaigns its messages name. Read only.
import type { Page } from '../shared/paging.ts';
import { accountKey } from '../store/account-key.ts';
import { contains } from '../store/contains.ts';
import type { Executor } from '../store/db.ts';
import { reportedStatusSql } from './message-status.ts';
import type { MessageSortKey, Period, ReplySortKey, Sort } from './query-parsers.ts';

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

const historyColumns = [
  'id',
  'campaign_id',
  'recipient',
  'gsmsmsid',
  'text',
  'parts',
  'credits',
  'state',
  'dlr_status',
  'due_at',
  'updated_at',
  'connector',
  'route',
] as const;

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

function orderMessages<Q extends ReturnType<typeof messageHistory>>(query: Q, sort: Sort<MessageSortKey>): Q {
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

export const historyRepo = {
  /** How many of the account's messages match the filter (see `messageHistory`). */
  async countMessages(db: Executor, accountId: number, filter: MessageFilter): Promise<number> {
    const row = await messageHistory(db, accountId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the account's messages matching the filter, in the order asked (then by id). */
  messagesPage(
    db: Executor,
    accountId: number,
    filter: MessageFilter,
    sort: Sort<MessageSortKey>,
    page: Page,
  ) {
    return orderMessages(messageHistory(db, accountId, filter), sort)
      .select(historyColumns)
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /** The ids and recipients of the first `limit` messages matching the filter, in the order asked. */
  messageKeys(
    db: Executor,
    accountId: number,
    filter: MessageFilter,
    sort: Sort<MessageSortKey>,
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

  /** Sender and cost of each of the account's campaigns with these ids (what their messages read out). */
  campaignSummaries(db: Executor, accountId: number, campaignIds: readonly number[]) {
    return db
      .selectFrom('campaigns')
      .select(['id', 'sender', 'cost'])
      .where('id', 'in', campaignIds)
      .where(accountKey, '=', accountId)
      .execute();
  },

  /** How many replies the account received in the period. */
  async countReplies(db: Executor, accountId: number, period: Period): Promise<number> {
    const row = await replyHistory(db, accountId, period)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the replies the account received in the period, in the order asked (then by id). */
  repliesPage(db: Executor, accountId: number, period: Period, sort: Sort<ReplySortKey>, page: Page) {
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
};

export type HistoryRow = Awaited<ReturnType<typeof historyRepo.messagesByIds>>[number];
