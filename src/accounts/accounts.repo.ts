// SQL for the accounts table: the rows, their profile, their lock and the reads of who pays. No rules here.
// The balance column is written by the credits' statements (`credits.repo.ts`).

import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';
import type { AccountsTable } from '../store/schema.ts';

export type NewAccount = Omit<Insertable<AccountsTable>, 'id'>;

/** What the account object is built from (everything but the password hash). */
const profileColumns = [
  'id',
  'parent_id',
  'email',
  'first_name',
  'last_name',
  'company',
  'credits',
  'unlimited',
  'locked',
  'type',
  'phone',
  'address1',
  'address2',
  'zip',
  'city',
  'country_code',
  'sender',
  'description',
  'credit_limit',
] as const;

/** The account columns every send reads (who pays, whether the sender is locked). */
const findColumns = [
  'id',
  'parent_id',
  'email',
  'first_name',
  'last_name',
  'company',
  'credits',
  'unlimited',
  'locked',
  'created_at',
  'credit_limit',
] as const;

export const accountsRepo = {
  async insert(db: Executor, account: NewAccount): Promise<number> {
    const row = await db.insertInto('accounts').values(account).returning('id').executeTakeFirstOrThrow();
    return row.id;
  },

  /** By id; on every send (who pays), so compiled once. */
  async find(db: Executor, id: number) {
    const [row] = await runPrepared<Pick<Selectable<AccountsTable>, (typeof findColumns)[number]>>(
      db,
      'accounts.find',
      (q) =>
        q
          .selectFrom('accounts')
          .select(findColumns)
          .where('id', '=', slot(0) as unknown as number),
      [id],
    );
    return row;
  },

  findByEmail(db: Executor, email: string) {
    return db.selectFrom('accounts').select(['id']).where('email', '=', email).executeTakeFirst();
  },

  /** What a sign-in with an e-mail and a password needs. */
  findCredentials(db: Executor, email: string) {
    return db
      .selectFrom('accounts')
      .select(['id', 'parent_id', 'password_hash', 'locked'])
      .where('email', '=', email)
      .executeTakeFirst();
  },

  /** The account with its profile. */
  profile(db: Executor, id: number) {
    return db.selectFrom('accounts').select(profileColumns).where('id', '=', id).executeTakeFirst();
  },

  /** The direct sub-accounts of `parentId` with their profiles, oldest first. */
  children(db: Executor, parentId: number) {
    return db
      .selectFrom('accounts')
      .select(profileColumns)
      .where('parent_id', '=', parentId)
      .orderBy('id')
      .execute();
  },

  /** One direct sub-account of `parentId`, or undefined for any other account. */
  child(db: Executor, parentId: number, id: number) {
    return db
      .selectFrom('accounts')
      .select(profileColumns)
      .where('id', '=', id)
      .where('parent_id', '=', parentId)
      .executeTakeFirst();
  },

  /**
   * A parent's lock (1) of its direct sub-account `id`, from open (0), or its unlock, from the parent's lock
   * only (the operator's, 2, stays); true when this statement changed it (on PostgreSQL the row stays locked
   * until the transaction ends, so two locks of one account serialize).
   */
  async setLocked(db: Executor, parentId: number, id: number, locked: 0 | 1): Promise<boolean> {
    const rows = await db
      .updateTable('accounts')
      .set({ locked })
      .where('id', '=', id)
      .where('parent_id', '=', parentId)
      .where('locked', '=', locked === 1 ? 0 : 1)
      .returning('id')
      .execute();
    return rows.length > 0;
  },

  /** The operator's lock (2) of any account, over a parent's lock too, or its unlock of either; true when changed. */
  async setLockedByOperator(db: Executor, id: number, locked: 0 | 2): Promise<boolean> {
    const rows = await db
      .updateTable('accounts')
      .set({ locked })
      .where('id', '=', id)
      .where('locked', '!=', locked)
      .returning('id')
      .execute();
    return rows.length > 0;
  },

  /** Every account after `afterId`, by id, `limit` at a time (the operator's list). */
  page(db: Executor, afterId: number, limit: number) {
    return db
      .selectFrom('accounts')
      .select(findColumns)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  },

  /** How many direct sub-accounts `parentId` has. */
  async childCount(db: Executor, parentId: number): Promise<number> {
    const row = await db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('parent_id', '=', parentId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },
};
