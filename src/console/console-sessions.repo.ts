// SQL for the console's sessions. No rules here.
import type { Insertable } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { ConsoleSessionsTable } from '../store/schema.ts';

export type NewSession = Insertable<ConsoleSessionsTable>;

export const consoleSessionsRepo = {
  insert(db: Executor, session: NewSession) {
    return db.insertInto('console_sessions').values(session).execute();
  },

  /** The session of a cookie's hash while it has not expired. */
  findLive(db: Executor, sessionHash: string, now: number) {
    return db
      .selectFrom('console_sessions')
      .select([
        'id',
        'account_id',
        'acting_account_id',
        'user_id',
        'csrf_token',
        'expires_at',
        'last_used_at',
      ])
      .where('session_hash', '=', sessionHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  },

  setActing(db: Executor, id: number, actingAccountId: number) {
    return db
      .updateTable('console_sessions')
      .set({ acting_account_id: actingAccountId })
      .where('id', '=', id)
      .execute();
  },

  delete(db: Executor, sessionHash: string) {
    return db.deleteFrom('console_sessions').where('session_hash', '=', sessionHash).execute();
  },

  /** Sessions expired by `before`, at most `limit` of them; how many went. */
  async deleteExpired(db: Executor, before: number, limit: number): Promise<number> {
    const ids = db.selectFrom('console_sessions').select('id').where('expires_at', '<=', before).limit(limit);
    const result = await db.deleteFrom('console_sessions').where('id', 'in', ids).executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** When a request last used the session (written at most once a minute by the service). */
  touch(db: Executor, id: number, now: number) {
    return db.updateTable('console_sessions').set({ last_used_at: now }).where('id', '=', id).execute();
  },

  /** A user's live sessions, newest first. */
  listOfUser(db: Executor, userId: number, now: number) {
    return db
      .selectFrom('console_sessions')
      .select(['id', 'created_at', 'last_used_at', 'ip', 'user_agent', 'expires_at'])
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .orderBy('id', 'desc')
      .execute();
  },

  /** Ends one session of a user; how many went (0: not one of the user's). */
  async deleteOfUser(db: Executor, userId: number, id: number): Promise<number> {
    const result = await db
      .deleteFrom('console_sessions')
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Ends every session of a user but `exceptId`'s. */
  async deleteAllOfUser(db: Executor, userId: number, exceptId: number | undefined): Promise<void> {
    let query = db.deleteFrom('console_sessions').where('user_id', '=', userId);
    if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
    await query.execute();
  },
};
