// SQL for contact lists and the blacklist and NPAI number lists. Every query is scoped by account.

import { insertRows } from '../store/bulk-insert.ts';
import type { Executor } from '../store/db.ts';

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

export type NumberList = 'blacklist' | 'npai';

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

  contactsPage(db: Executor, accountId: number, listId: number, start: number, length: number) {
    return db
      .selectFrom('contacts')
      .select(['id', 'number', 'info1', 'info2', 'info3', 'info4', 'created_at'])
      .where('account_id', '=', accountId)
      .where('list_id', '=', listId)
      .orderBy('id')
      .limit(length)
      .offset(start)
      .execute();
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

  /** Rows as values in `contactColumns` order. */
  insertContacts(db: Executor, rows: readonly unknown[][]): Promise<void> {
    return insertRows(db, 'contacts', contactColumns, rows, contactBatchRows);
  },
};

export const numberListsRepo = {
  /** Adds numbers the list does not hold yet; returns how many were added. */
  async add(
    db: Executor,
    list: NumberList,
    accountId: number,
    numbers: readonly string[],
    now: number,
  ): Promise<number> {
    let added = 0;
    for (let i = 0; i < numbers.length; i += 1000) {
      const values = numbers
        .slice(i, i + 1000)
        .map((number) => ({ account_id: accountId, number, created_at: now }));
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
      .select(['id', 'number', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .limit(length)
      .offset(start)
      .execute();
  },
};
