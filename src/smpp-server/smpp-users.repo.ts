// SQL for SMPP credentials (`smpp_users`). No rules here.
import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { SmppUsersTable } from '../store/schema.ts';

export type SmppUserRow = Selectable<SmppUsersTable>;

export const smppUsersRepo = {
  async insert(db: Executor, user: Omit<Insertable<SmppUsersTable>, 'id'>): Promise<number> {
    const row = await db.insertInto('smpp_users').values(user).returning('id').executeTakeFirstOrThrow();
    return Number(row.id);
  },

  bySystemId(db: Executor, systemId: string): Promise<SmppUserRow | undefined> {
    return db.selectFrom('smpp_users').selectAll().where('system_id', '=', systemId).executeTakeFirst();
  },

  /** One account's users, or every account's when `accountId` is undefined (the operator's list). */
  list(db: Executor, accountId: number | undefined): Promise<SmppUserRow[]> {
    let query = db.selectFrom('smpp_users').selectAll().orderBy('id');
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    return query.execute();
  },

  /** Which of `ids` still exist. */
  async existing(db: Executor, ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await db.selectFrom('smpp_users').select('id').where('id', 'in', ids).execute();
    return rows.map((r) => Number(r.id));
  },

  /** Deletes the user named `systemId` (of `accountId` when given); returns its id, or undefined for none. */
  async delete(
    db: Executor,
    systemId: string,
    accountId: number | undefined,
  ): Promise<{ id: number; accountId: number } | undefined> {
    let query = db.deleteFrom('smpp_users').where('system_id', '=', systemId);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const row = await query.returning(['id', 'account_id']).executeTakeFirst();
    return row === undefined ? undefined : { id: Number(row.id), accountId: Number(row.account_id) };
  },
};
