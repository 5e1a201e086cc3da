// SQL for campaigns, and the account's blacklist and NPAI filters. No rules here.
import { type Selectable, sql } from 'kysely';
import { insertRows } from '../store/bulk-insert.ts';
import type { Executor } from '../store/db.ts';
import { padToShape, runPrepared, shapedChunks, slot, slots } from '../store/prepared.ts';
import type { CampaignsTable } from '../store/schema.ts';

export type NewCampaign = Omit<Selectable<CampaignsTable>, 'id' | 'moderation_note'>;

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
  'system',
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

/** The campaigns' id sequence on PostgreSQL, asked once. */
let sequence: string | undefined;

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

  /**
   * PostgreSQL only: `n` ids drawn from the campaigns' sequence in one statement, for sends written together
   * (`insertWithIds`). The sequence is named once per process, as its schema's search path shows it: without
   * the schema, so that every store a process opens (each test's schema) draws from its own.
   */
  async reserveIds(db: Executor, n: number): Promise<number[]> {
    if (sequence === undefined) {
      const { rows } = await sql<{ name: string }>`
        select cast(cast(pg_get_serial_sequence('campaigns', 'id') as regclass) as text) as name`.execute(db);
      sequence = rows[0].name;
    }
    const { rows } = await sql<{ id: number }>`select nextval(${sequence}::regclass) as id
      from generate_series(1, ${n})`.execute(db);
    return rows.map((r) => Number(r.id));
  },

  /** Campaigns whose ids were reserved (`reserveIds`), in one statement per power-of-two batch. */
  async insertWithIds(db: Executor, campaigns: readonly (NewCampaign & { id: number })[]): Promise<void> {
    const rows = campaigns.map((c) => [c.id, ...campaignColumns.map((column) => c[column])]);
    await insertRows(db, 'campaigns', ['id', ...campaignColumns], rows, 512);
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

  /**
   * Marks a campaign cancelled unless it already is, its cost refunded (0: what it cost the account in the
   * end, as `countNotRouted` takes refunded parts off); the row lock it takes orders concurrent cancels.
   */
  async markCancelled(db: Executor, accountId: number, id: number): Promise<boolean> {
    const result = await db
      .updateTable('campaigns')
      .set({ status: 'cancelled', cost: 0 })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('status', '<>', 'cancelled')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** What held a campaign for moderation (the rule), written in the send's transaction. */
  async setModerationNote(db: Executor, id: number, note: string): Promise<void> {
    await db.updateTable('campaigns').set({ moderation_note: note }).where('id', '=', id).execute();
  },

  /**
   * The operator's decision on a held campaign: `scheduled` (approved) or `refused` (its cost 0, refunded),
   * only while it is still `moderation`; the row it changed, undefined when it was not held (any more). The
   * row lock orders concurrent decisions.
   */
  async decideModeration(db: Executor, id: number, to: 'scheduled' | 'refused', note?: string) {
    const before = await db
      .selectFrom('campaigns')
      .select(['id', 'account_id', 'billed_account_id', 'cost', 'sent', 'created_at'])
      .where('id', '=', id)
      .where('status', '=', 'moderation')
      .executeTakeFirst();
    if (!before) return undefined;
    const result = await db
      .updateTable('campaigns')
      .set(to === 'refused' ? { status: to, cost: 0, moderation_note: note ?? null } : { status: to })
      .where('id', '=', id)
      .where('status', '=', 'moderation')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0 ? before : undefined;
  },

  /** The account a campaign belongs to (any account's: the operator's moderation). */
  async ownerOf(db: Executor, id: number): Promise<number | undefined> {
    const row = await db.selectFrom('campaigns').select('account_id').where('id', '=', id).executeTakeFirst();
    return row ? Number(row.account_id) : undefined;
  },

  /** The campaigns held for moderation, oldest first, after `afterId` (keyset), every account's. */
  held(db: Executor, afterId: number, limit: number) {
    return db
      .selectFrom('campaigns')
      .select([
        'id',
        'account_id',
        'sender',
        'text',
        'cost',
        'sent',
        'due_at',
        'created_at',
        'moderation_note',
      ])
      .where('status', '=', 'moderation')
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  /** The account's campaigns held for moderation: an unlock must leave their messages held. */
  async heldIds(db: Executor, accountId: number): Promise<number[]> {
    const rows = await db
      .selectFrom('campaigns')
      .select('id')
      .where('status', '=', 'moderation')
      .where('account_id', '=', accountId)
      .execute();
    return rows.map((r) => Number(r.id));
  },

  /** Records the lists a campaign was sent to, in the send's transaction. */
  async insertLists(db: Executor, accountId: number, campaignId: number, listIds: readonly number[]) {
    if (listIds.length === 0) return;
    await db
      .insertInto('campaign_lists')
      .values(listIds.map((listId) => ({ campaign_id: campaignId, list_id: listId, account_id: accountId })))
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
    return filtersRepo.listedAmong(db, [accountId], numbers);
  },

  /**
   * Which of `numbers` are in the blacklist or NPAI list of any of `accountIds`, with the account each row is
   * listed for: the lookups of several sends in one statement (`listed-lookups.ts`). A row may answer a number
   * another of the accounts asked about; the caller keeps each send's own pairs.
   */
  listedAmong(db: Executor, accountIds: readonly number[], numbers: readonly string[]) {
    const accounts = [...accountIds];
    const list = [...numbers];
    const accountCount = padToShape(accounts, 1);
    const size = padToShape(list, 8);
    return runPrepared<{ account_id: number | string; number: string; list: string }>(
      db,
      `filters.listedAmong.${accountCount}.${size}`,
      (ex) => {
        const accountSlots = slots(0, accountCount);
        const numberSlots = slots(accountCount, size);
        return ex
          .selectFrom('blacklist')
          .select(['account_id', 'number', sql<string>`'blacklist'`.as('list')])
          .where('account_id', 'in', accountSlots)
          .where('number', 'in', numberSlots)
          .unionAll(
            ex
              .selectFrom('npai')
              .select(['account_id', 'number', sql<string>`'npai'`.as('list')])
              .where('account_id', 'in', accountSlots)
              .where('number', 'in', numberSlots),
          );
      },
      [...accounts, ...list],
    );
  },
};
