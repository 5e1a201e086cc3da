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
      .select(['id', 'account_id', 'acting_account_id', 'user_id', 'csrf_token', 'expires_at'])
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
};
