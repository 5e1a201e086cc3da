// SQL for contact lists and the blacklist and NPAI number lists. Every query is scoped by account.

import { insertRows } from '../store/bulk-insert.ts';
import { contains } from '../store/contains.ts';
import type { Executor } from '../store/db.ts';
import { deleteAged } from '../store/purge.ts';

export const contactColumns = [
  'list_id',
  'account_id',
  'number',
  'info1',
  'info2',
  'info3',
  'info4',
  'created_at',
] as const;

const contactBatchRows = 2000;
/** Entries per blacklist/NPAI insert: 8 values each, far below SQLite's 32,766 bound parameters. */
const entryBatchRows = 1000;

export type NumberList = 'blacklist' | 'npai';

export type InfoKey = 'info1' | 'info2' | 'info3' | 'info4';

/** What a contact update may change; a field left out is not touched. */
export type ContactChanges = Partial<Record<'number' | InfoKey, string>>;

/** A number to put on the blacklist or NPAI list, with what is known of it. */
export interface NumberEntry {
  number: string;
  info1?: string | null;
  info2?: string | null;
  info3?: string | null;
  info4?: string | null;
  campaignId?: number | null;
}

/** What a list's `search` looks in: the number and the contact's fields. */
const searchColumns = ['number', 'info1', 'info2', 'info3', 'info4'] as const;

export const listsRepo = {
  async insert(db: Executor, accountId: number, name: string, now: number): Promise<number> {
    const row = await db
      .insertInto('lists')
      .values({ account_id: accountId, name, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  },

  find(db: Executor, accountId: number, id: number) {
    return db
      .selectFrom('lists')
      .select(['id', 'name', 'created_at'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** Which of `ids` are lists of the account. */
  async existing(db: Executor, accountId: number, ids: readonly number[]): Promise<Set<number>> {
    const rows = await db
      .selectFrom('lists')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
    return new Set(rows.map((r) => Number(r.id)));
  },

  /** The account's lists with their contact counts. */
  all(db: Executor, accountId: number) {
    return db
      .selectFrom('lists')
      .leftJoin('contacts', 'contacts.list_id', 'lists.id')
      .select(['lists.id', 'lists.name', 'lists.created_at'])
      .select((eb) => eb.fn.count<number>('contacts.id').as('count'))
      .where('lists.account_id', '=', accountId)
      .groupBy(['lists.id', 'lists.name', 'lists.created_at'])
      .orderBy('lists.id')
      .execute();
  },

  async countContacts(db: Executor, accountId: number, listIds: readonly number[]): Promise<number> {
    const row = await db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('list_id', 'in', listIds)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Contacts of the given lists after contact id `afterId`, in id order (keyset paging). */
  contactsAfter(db: Executor, accountId: number, listIds: readonly number[], afterId: number, limit: number) {
    return db
      .selectFrom('contacts')
      .select(['id', 'number', 'info1', 'info2', 'info3', 'info4'])
      .where('account_id', '=', accountId)
      .where('list_id', 'in', listIds)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  /** A page of the list's contacts in id order, only those holding `search` when one is given. */
  contactsPage(
    db: Executor,
    accountId: number,
    listId: number,
    start: number,
    length: number,
    search: string | undefined,
  ) {
    let query = db
      .selectFrom('contacts')
      .select(['id', 'number', 'info1', 'info2', 'info3', 'info4'])
      .where('account_id', '=', accountId)
      .where('list_id', '=', listId);
    if (search !== undefined) query = query.where(contains(searchColumns, search));
    return query.orderBy('id').limit(length).offset(start).execute();
  },

  /** How many of the list's contacts hold `search`. */
  async countMatching(db: Executor, accountId: number, listId: number, search: string): Promise<number> {
    const row = await db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('list_id', '=', listId)
      .where(contains(searchColumns, search))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Which of `numbers` the list already holds. */
  async numbersIn(db: Executor, accountId: number, listId: number, numbers: readonly string[]) {
    const rows = await db
      .selectFrom('contacts')
      .select('number')
      .where('account_id', '=', accountId)
      .where('list_id', '=', listId)
      .where('number', 'in', numbers)
      .execute();
    return rows.map((r) => r.number);
  },

  /** Deletes up to `limit` of the account's contacts added before `before`; returns how many (retention). */
  purgeOlder(db: Executor, accountId: number, before: number, limit: number): Promise<number> {
    return deleteAged(
      db,
      { table: 'contacts', column: 'created_at', account: 'column' },
      accountId,
      before,
      limit,
    );
  },

  /** Rows as values in `contactColumns` order. */
  insertContacts(db: Executor, rows: readonly unknown[][]): Promise<void> {
    return insertRows(db, 'contacts', contactColumns, rows, contactBatchRows);
  },

  /** Deletes the list and its contacts (two set-based statements); returns whether the list was there. */
  async remove(db: Executor, accountId: number, listId: number): Promise<boolean> {
    await db
      .deleteFrom('contacts')
      .where('account_id', '=', accountId)
      .where('list_id', '=', listId)
      .execute();
    const result = await db
      .deleteFrom('lists')
      .where('account_id', '=', accountId)
      .where('id', '=', listId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /** Deletes every contact whose number a lower contact id of the same list holds; returns how many. */
  async deduplicate(db: Executor, accountId: number, listId: number): Promise<number> {
    const result = await db
      .deleteFrom('contacts')
      .where('account_id', '=', accountId)
      .where('list_id', '=', listId)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('contacts as earlier')
            .select('earlier.id')
            .whereRef('earlier.list_id', '=', 'contacts.list_id')
            .whereRef('earlier.number', '=', 'contacts.number')
            .whereRef('earlier.id', '<', 'contacts.id'),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Deletes the list's contacts whose number is on the account's NPAI list; returns how many. */
  async removeNpai(db: Executor, accountId: number, listId: number): Promise<number> {
    const result = await db
      .deleteFrom('contacts')
      .where('account_id', '=', accountId)
      .where('list_id', '=', listId)
      .where('number', 'in', (eb) =>
        eb.selectFrom('npai').select('npai.number').where('npai.account_id', '=', accountId),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  findContact(db: Executor, accountId: number, contactId: number) {
    return db
      .selectFrom('contacts')
      .select(['id', 'list_id'])
      .where('account_id', '=', accountId)
      .where('id', '=', contactId)
      .executeTakeFirst();
  },

  /** Returns how many contacts were changed: 0 when the account has no such contact. */
  async updateContact(
    db: Executor,
    accountId: number,
    contactId: number,
    changes: ContactChanges,
  ): Promise<number> {
    const result = await db
      .updateTable('contacts')
      .set(changes)
      .where('account_id', '=', accountId)
      .where('id', '=', contactId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /** Returns how many contacts were deleted: 0 when the account has no such contact. */
  async removeContact(db: Executor, accountId: number, contactId: number): Promise<number> {
    const result = await db
      .deleteFrom('contacts')
      .where('account_id', '=', accountId)
      .where('id', '=', contactId)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};

export const numberListsRepo = {
  /** Adds numbers the list does not hold yet; returns how many were added. */
  add(
    db: Executor,
    list: NumberList,
    accountId: number,
    numbers: readonly string[],
    now: number,
    campaignId: number | null = null,
  ): Promise<number> {
    return numberListsRepo.addEntries(
      db,
      list,
      accountId,
      numbers.map((number) => ({ number, campaignId })),
      now,
    );
  },

  /** Adds entries whose number the list does not hold yet (a number already there keeps its entry). */
  async addEntries(
    db: Executor,
    list: NumberList,
    accountId: number,
    entries: readonly NumberEntry[],
    now: number,
  ): Promise<number> {
    let added = 0;
    for (let i = 0; i < entries.length; i += entryBatchRows) {
      const values = entries.slice(i, i + entryBatchRows).map((e) => ({
        account_id: accountId,
        number: e.number,
        info1: e.info1 ?? null,
        info2: e.info2 ?? null,
        info3: e.info3 ?? null,
        info4: e.info4 ?? null,
        campaign_id: e.campaignId ?? null,
        created_at: now,
      }));
      const result = await db
        .insertInto(list)
        .values(values)
        .onConflict((oc) => oc.columns(['account_id', 'number']).doNothing())
        .executeTakeFirst();
      added += Number(result.numInsertedOrUpdatedRows ?? 0);
    }
    return added;
  },

  page(db: Executor, list: NumberList, accountId: number, start: number, length: number) {
    return db
      .selectFrom(list)
      .select(['id', 'number', 'info1', 'info2', 'info3', 'info4', 'campaign_id', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(length)
      .offset(start)
      .execute();
  },

  async count(db: Executor, list: NumberList, accountId: number): Promise<number> {
    const row = await db
      .selectFrom(list)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** Which of `numbers` the account's list holds. */
  async present(db: Executor, list: NumberList, accountId: number, numbers: readonly string[]) {
    const rows = await db
      .selectFrom(list)
      .select('number')
      .where('account_id', '=', accountId)
      .where('number', 'in', numbers)
      .execute();
    return rows.map((r) => r.number);
  },

  /** Deletes the account's entry for a number; how many went (0: the number was not listed). */
  async removeNumber(db: Executor, list: NumberList, accountId: number, number: string): Promise<number> {
    const result = await db
      .deleteFrom(list)
      .where('account_id', '=', accountId)
      .where('number', '=', number)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Returns how many entries were deleted: 0 when the account has no such entry. */
  async remove(db: Executor, list: NumberList, accountId: number, id: number): Promise<number> {
    const result = await db
      .deleteFrom(list)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
