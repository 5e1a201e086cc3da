// SQL for campaigns, and the account's blacklist and NPAI filters. No rules here.
import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import type { Page } from '../shared/paging.ts';
import { contains } from '../store/contains.ts';
import type { Executor } from '../store/db.ts';
import { padToShape, runPrepared, shapedChunks, slot, slots } from '../store/prepared.ts';
import type { CampaignsTable, Database } from '../store/schema.ts';

export type NewCampaign = Omit<Selectable<CampaignsTable>, 'id'>;

const campaignColumns = [
  'account_id',
  'billed_account_id',
  'sender',
  'text',
  'pushtype',
  'unicode',
  'cost',
  'total',
  'sent',
  'blacklisted',
  'duplicated',
  'invalid',
  'npai',
  'not_allowed',
  'status',
  'due_at',
  'created_at',
] as const satisfies readonly (keyof NewCampaign)[];

/** Numbers per blacklist/NPAI lookup: two IN lists of this size in one statement. */
export const filterChunk = 500;

const campaignReadColumns = [
  'id',
  'account_id',
  'billed_account_id',
  'sender',
  'text',
  'pushtype',
  'cost',
  'total',
  'sent',
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

export interface CampaignSort {
  key: 'id' | 'date' | 'text' | 'cost' | 'status';
  descending: boolean;
}

const sortColumn = { id: 'id', date: 'due_at', text: 'text', cost: 'cost', status: 'status' } as const;

/**
 * The account check of a lookup by ids. Rows given by id are found by id: compared plainly, `account_id` can
 * make SQLite's planner (which keeps no statistics) prefer an index on the account, and walk all of its rows.
 */
const ownerIs = (accountId: number) => (eb: ExpressionBuilder<Database, 'campaigns' | 'contacts'>) =>
  eb(sql<number>`${eb.ref('account_id')} + 0`, '=', accountId);

/** The account's campaigns matching the filter. */
function filtered(db: Executor, accountId: number, filter: CampaignFilter) {
  let q = db.selectFrom('campaigns');
  if (filter.ids !== undefined) {
    q = q.where('id', 'in', filter.ids).where(ownerIs(accountId));
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

export const campaignsRepo = {
  /** Retention: the account's oldest campaigns created before `before`, `limit` of them, in id order. */
  async createdBefore(db: Executor, accountId: number, before: number, limit: number): Promise<number[]> {
    const rows = await db
      .selectFrom('campaigns')
      .select('id')
      .where('account_id', '=', accountId)
      .where('created_at', '<', before)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => Number(r.id));
  },

  /** Retention: deletes a campaign row and the lists it named (its messages and links are gone first). */
  async remove(db: Executor, campaignId: number): Promise<void> {
    await db.deleteFrom('campaign_lists').where('campaign_id', '=', campaignId).execute();
    await db.deleteFrom('campaigns').where('id', '=', campaignId).execute();
  },

  async insert(db: Executor, campaign: NewCampaign): Promise<number> {
    const [row] = await runPrepared<{ id: number }>(
      db,
      'campaigns.insert',
      (ex) =>
        ex
          .insertInto('campaigns')
          .values(Object.fromEntries(campaignColumns.map((c, i) => [c, slot(i)])) as never)
          .returning('id'),
      campaignColumns.map((c) => campaign[c]),
    );
    return Number(row.id);
  },

  async setBilledAccount(db: Executor, accountId: number, id: number, billedAccountId: number) {
    await db
      .updateTable('campaigns')
      .set({ billed_account_id: billedAccountId })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  },

  find(db: Executor, accountId: number, id: number) {
    return db
      .selectFrom('campaigns')
      .select(campaignReadColumns)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** Marks a campaign cancelled unless it already is; the row lock it takes orders concurrent cancels. */
  async markCancelled(db: Executor, accountId: number, id: number): Promise<boolean> {
    const result = await db
      .updateTable('campaigns')
      .set({ status: 'cancelled' })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('status', '<>', 'cancelled')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** How many campaigns the account has. */
  async countAll(db: Executor, accountId: number): Promise<number> {
    const row = await db
      .selectFrom('campaigns')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
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
  page(db: Executor, accountId: number, filter: CampaignFilter, sort: CampaignSort, page: Page) {
    const direction = sort.descending ? 'desc' : 'asc';
    let q = filtered(db, accountId, filter).select(campaignReadColumns);
    if (sort.key !== 'id') q = q.orderBy(sortColumn[sort.key], direction);
    return q.orderBy('id', direction).limit(page.length).offset(page.start).execute();
  },

  /** Records the lists a campaign was sent to, in the send's transaction. */
  async insertLists(db: Executor, accountId: number, campaignId: number, listIds: readonly number[]) {
    if (listIds.length === 0) return;
    await db
      .insertInto('campaign_lists')
      .values(listIds.map((listId) => ({ campaign_id: campaignId, list_id: listId, account_id: accountId })))
      .execute();
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

  /** The fields of the account's contacts with these ids (a contact deleted since is absent). */
  contactFields(db: Executor, accountId: number, contactIds: readonly number[]) {
    return db
      .selectFrom('contacts')
      .select(['id', 'info1', 'info2', 'info3', 'info4'])
      .where('id', 'in', contactIds)
      .where(ownerIs(accountId))
      .execute();
  },

  /** Sender and cost of each of the account's campaigns with these ids (what their messages read out). */
  summaries(db: Executor, accountId: number, campaignIds: readonly number[]) {
    return db
      .selectFrom('campaigns')
      .select(['id', 'sender', 'cost'])
      .where('id', 'in', campaignIds)
      .where(ownerIs(accountId))
      .execute();
  },

  /**
   * Messages of a campaign the delivery worker found no route for when it sent them: moved from `sent` to
   * `not_allowed`, and the credits given back for them off `cost`.
   */
  async countNotRouted(db: Executor, accountId: number, id: number, messages: number, refunded: number) {
    await db
      .updateTable('campaigns')
      .set((eb) => ({
        not_allowed: eb('not_allowed', '+', messages),
        sent: eb('sent', '-', messages),
        cost: eb('cost', '-', refunded),
      }))
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  },

  /** Sender and pushtype of campaigns, for the delivery worker (not scoped: the worker serves every account). */
  async sendingOptions(db: Executor, ids: readonly number[]) {
    const found: Pick<Selectable<CampaignsTable>, 'id' | 'sender' | 'pushtype'>[] = [];
    for (const chunk of shapedChunks(ids, 512, 1)) {
      const rows = await runPrepared<(typeof found)[number]>(
        db,
        `campaigns.sendingOptions.${chunk.length}`,
        (q) =>
          q
            .selectFrom('campaigns')
            .select(['id', 'sender', 'pushtype'])
            .where('id', 'in', slots(0, chunk.length)),
        chunk,
      );
      found.push(...rows);
    }
    return found;
  },

  /** The owner of a campaign, for operator commands that are given only a ticket. */
  findOwner(db: Executor, id: number) {
    return db.selectFrom('campaigns').select(['account_id']).where('id', '=', id).executeTakeFirst();
  },
};

export const filtersRepo = {
  /** Whether the account has any number on its blacklist or NPAI list (one index probe each). */
  async hasAny(db: Executor, accountId: number): Promise<boolean> {
    const rows = await runPrepared<{ one: number }>(
      db,
      'filters.hasAny',
      (ex) =>
        ex
          .selectFrom('blacklist')
          .select(sql<number>`1`.as('one'))
          .where('account_id', '=', slot(0) as never)
          .unionAll(
            ex
              .selectFrom('npai')
              .select(sql<number>`1`.as('one'))
              .where('account_id', '=', slot(0) as never),
          )
          .limit(slot(1) as never),
      [accountId, 1],
    );
    return rows.length > 0;
  },

  /** Which of `numbers` (at most 2 × filterChunk bound values) are in the account's blacklist or NPAI list. */
  listed(db: Executor, accountId: number, numbers: readonly string[]) {
    const list = [...numbers];
    const size = padToShape(list, 1);
    return runPrepared<{ number: string; list: string }>(
      db,
      `filters.listed.${size}`,
      (ex) => {
        const numberSlots = slots(1, size);
        return ex
          .selectFrom('blacklist')
          .select(['number', sql<string>`'blacklist'`.as('list')])
          .where('account_id', '=', slot(0) as never)
          .where('number', 'in', numberSlots)
          .unionAll(
            ex
              .selectFrom('npai')
              .select(['number', sql<string>`'npai'`.as('list')])
              .where('account_id', '=', slot(0) as never)
              .where('number', 'in', numberSlots),
          );
      },
      [accountId, ...list],
    );
  },
};
