// SQL of the campaign views (GET /campaign/:ticket, GET /campaigns): campaigns, the lists they were sent to,
// and their counters over the messages, STOP replies and links of those campaigns alone. Read only.
import type { Page } from '../shared/paging.ts';
import { accountKey } from '../store/account-key.ts';
import { contains } from '../store/contains.ts';
import type { Executor } from '../store/db.ts';
import type { CampaignsTable } from '../store/schema.ts';
import type { CampaignSortKey, Sort } from './query-parsers.ts';

const campaignColumns = [
  'id',
  'sender',
  'text',
  'cost',
  'status',
  'due_at',
  'created_at',
] as const satisfies readonly (keyof CampaignsTable)[];

/** What GET /campaigns filters on; every field may be absent. */
export interface CampaignFilter {
  /** Due times, inclusive, in ms. */
  from?: number;
  to?: number;
  /** Bounds on the messages the campaign sent (`sent`), inclusive. */
  sentMin?: number;
  sentMax?: number;
  /** Held in the text, without case for ASCII letters. */
  text?: string;
  /** Only these campaigns (those that wrote to a destination): at most a thousand, never empty. */
  ids?: readonly number[];
}

const sortColumn = { id: 'id', date: 'due_at', text: 'text', cost: 'cost', status: 'status' } as const;

/** The account's campaigns matching the filter, the service's own messages (`system`) left out. */
function filtered(db: Executor, accountId: number, filter: CampaignFilter) {
  let q = db.selectFrom('campaigns').where('system', '=', 0);
  if (filter.ids !== undefined) {
    q = q.where('id', 'in', filter.ids).where(accountKey, '=', accountId);
  } else {
    q = q.where('account_id', '=', accountId);
  }
  if (filter.from !== undefined) q = q.where('due_at', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('due_at', '<=', filter.to);
  if (filter.sentMin !== undefined) q = q.where('sent', '>=', filter.sentMin);
  if (filter.sentMax !== undefined) q = q.where('sent', '<=', filter.sentMax);
  if (filter.text !== undefined) q = q.where(contains(['text'], filter.text));
  return q;
}

export const campaignViewsRepo = {
  /** The account's campaign with this id; never a message the service queued itself (`system`). */
  find(db: Executor, accountId: number, id: number) {
    return db
      .selectFrom('campaigns')
      .select(campaignColumns)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('system', '=', 0)
      .executeTakeFirst();
  },

  /** How many campaigns the account has, the service's own messages (`system`) left out. */
  async countAll(db: Executor, accountId: number): Promise<number> {
    const row = await db
      .selectFrom('campaigns')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('system', '=', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** How many of the account's campaigns match the filter. */
  async count(db: Executor, accountId: number, filter: CampaignFilter): Promise<number> {
    const row = await filtered(db, accountId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the account's campaigns matching the filter, in the order asked, then by id the same way. */
  page(db: Executor, accountId: number, filter: CampaignFilter, sort: Sort<CampaignSortKey>, page: Page) {
    const direction = sort.descending ? 'desc' : 'asc';
    let q = filtered(db, accountId, filter).select(campaignColumns);
    if (sort.key !== 'id') q = q.orderBy(sortColumn[sort.key], direction);
    return q.orderBy('id', direction).limit(page.length).offset(page.start).execute();
  },

  /**
   * The account's campaigns that wrote to `number` (through the messages' recipient index), with a message due
   * at or after `dueFrom` when given; at most `limit` of them. A message is never due before its campaign.
   */
  async sentTo(
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

  /** The lists each of the campaigns was sent to, by campaign then list id. */
  listsOf(db: Executor, accountId: number, campaignIds: readonly number[]) {
    return db
      .selectFrom('campaign_lists')
      .select(['campaign_id', 'list_id'])
      .where('campaign_id', 'in', campaignIds)
      .where('account_id', '=', accountId)
      .orderBy('campaign_id')
      .orderBy('list_id')
      .execute();
  },

  /** Messages of the campaigns per state and receipt status (with the most attempts of each group), in one grouped query. */
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

  /** How many STOP replies each of the campaigns drew (campaigns without any are absent). */
  stopCounts(db: Executor, accountId: number, campaignIds: readonly number[]) {
    return db
      .selectFrom('replies')
      .select('campaign_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', 'in', campaignIds)
      .where('type', '=', 'STOP')
      .where('account_id', '=', accountId)
      .groupBy('campaign_id')
      .execute();
  },

  /** Clicks counted (folded) on the campaigns' links, per campaign (campaigns without links are absent). */
  clickCounts(db: Executor, accountId: number, campaignIds: readonly number[]) {
    return db
      .selectFrom('links')
      .select('campaign_id')
      .select((eb) => eb.fn.sum<number>('clicks').as('clicks'))
      .where('account_id', '=', accountId)
      .where('campaign_id', 'in', campaignIds)
      .groupBy('campaign_id')
      .execute();
  },
};

export type CampaignRow = NonNullable<Awaited<ReturnType<typeof campaignViewsRepo.find>>>;
