// SQL for campaigns, their messages, and the account's blacklist and NPAI filters. No rules here.
import { sql } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { CampaignsTable } from '../store/schema.ts';
import { insertRows } from './bulk-insert.ts';
import { runPrepared, slot } from '../store/prepared.ts';

export type NewCampaign = Omit<CampaignsTable, 'id'>;

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

/** Message columns in the order the service builds each row's values. */
export const messageColumns = [
  'campaign_id',
  'seq',
  'account_id',
  'recipient',
  'gsmsmsid',
  'contact_id',
  'text',
  'parts',
  'encoding',
  'state',
  'due_at',
  'updated_at',
] as const;

/** 12 columns × 1,000 rows stays well under SQLite's 32,766 bound parameters. */
const messageBatchRows = 1000;
/** Numbers per blacklist/NPAI lookup: two IN lists of this size in one statement. */
export const filterChunk = 500;

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

  /** Rows as values in `messageColumns` order. */
  insertMessages(db: Executor, rows: readonly unknown[][]): Promise<void> {
    return insertRows(db, 'messages', messageColumns, rows, messageBatchRows);
  },

  find(db: Executor, accountId: number, id: number) {
    return db
      .selectFrom('campaigns')
      .select(['id', 'account_id', 'sent', 'status'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The owner of a campaign, for operator commands that are given only a ticket. */
  findOwner(db: Executor, id: number) {
    return db.selectFrom('campaigns').select(['account_id']).where('id', '=', id).executeTakeFirst();
  },

  /** One page of a campaign's messages after `afterSeq`, in seq order (keyset paging on the unique key). */
  messagesPage(db: Executor, accountId: number, campaignId: number, afterSeq: number, limit: number) {
    return db
      .selectFrom('messages')
      .select(['seq', 'recipient', 'gsmsmsid', 'text', 'parts', 'encoding', 'state'])
      .where('campaign_id', '=', campaignId)
      .where('account_id', '=', accountId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
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
