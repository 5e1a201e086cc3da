// SQL for campaigns, and the account's blacklist and NPAI filters. No rules here.
import { type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { Page } from '../shared/paging.ts';
import type { Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';
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

/** Due times, inclusive, in ms; either end may be open. */
export interface DueRange {
  from?: number;
  to?: number;
}

function inRange<Q extends SelectQueryBuilder<Database, 'campaigns', object>>(query: Q, range: DueRange): Q {
  let q = query;
  if (range.from !== undefined) q = q.where('due_at', '>=', range.from) as Q;
  if (range.to !== undefined) q = q.where('due_at', '<=', range.to) as Q;
  return q;
}

export const campaignsRepo = {
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

  /** How many of the account's campaigns are due within the range. */
  async count(db: Executor, accountId: number, range: DueRange): Promise<number> {
    const row = await inRange(db.selectFrom('campaigns'), range)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** A page of the account's campaigns due within the range, by due time then id. */
  page(db: Executor, accountId: number, range: DueRange, page: Page & { ascending: boolean }) {
    const direction = page.ascending ? 'asc' : 'desc';
    return inRange(db.selectFrom('campaigns'), range)
      .select(campaignReadColumns)
      .where('account_id', '=', accountId)
      .orderBy('due_at', direction)
      .orderBy('id', direction)
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  /** Sender and pushtype of campaigns, for the delivery worker (not scoped: the worker serves every account). */
  sendingOptions(db: Executor, ids: readonly number[]) {
    return db.selectFrom('campaigns').select(['id', 'sender', 'pushtype']).where('id', 'in', ids).execute();
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
    const numberSlots = numbers.map((_, i) => slot(i + 1));
    return runPrepared<{ number: string; list: string }>(
      db,
      `filters.listed.${numbers.length}`,
      (ex) =>
        ex
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
          ),
      [accountId, ...numbers],
    );
  },
};
