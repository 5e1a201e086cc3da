// SQL for the SMPP binds up on every process (`smpp_binds`). No rules here.
import { sql } from 'kysely';
import type { Executor } from '../store/db.ts';

export const smppBindsRepo = {
  /** Locks the SMPP user's row until the transaction ends (PostgreSQL: binds of one user claimed in turn). */
  async lockUser(db: Executor, userId: number): Promise<void> {
    await db.selectFrom('smpp_users').select('id').where('id', '=', userId).forUpdate().execute();
  },

  /**
   * Records a bind of `userId` held by `server` if fewer than `maxBinds` of the user's binds are alive at
   * `now`: its id, or undefined. One statement, the count and the insert together.
   */
  async claim(
    db: Executor,
    bind: { userId: number; server: string; maxBinds: number; now: number; aliveUntil: number },
  ): Promise<number | undefined> {
    const { userId, server, maxBinds, now, aliveUntil } = bind;
    const result = await sql<{ id: number }>`
      insert into smpp_binds (smpp_user_id, server, bound_at, alive_until)
      select cast(${userId} as bigint), ${server}, cast(${now} as bigint), cast(${aliveUntil} as bigint)
      where (select count(*) from smpp_binds where smpp_user_id = ${userId} and alive_until >= ${now}) < ${maxBinds}
      returning id`.execute(db);
    const [row] = result.rows;
    return row === undefined ? undefined : Number(row.id);
  },

  async release(db: Executor, id: number): Promise<void> {
    await db.deleteFrom('smpp_binds').where('id', '=', id).execute();
  },

  /**
   * Renews `server`'s binds among `ids`, and with `dropBefore` deletes its others bound before then (a release
   * that failed, a bind gone since; not one a claim under way may have just written).
   */
  async renew(
    db: Executor,
    server: string,
    ids: readonly number[],
    aliveUntil: number,
    dropBefore: number | undefined,
  ): Promise<void> {
    if (ids.length > 0) {
      await db
        .updateTable('smpp_binds')
        .set({ alive_until: aliveUntil })
        .where('server', '=', server)
        .where('id', 'in', ids)
        .execute();
    }
    if (dropBefore === undefined) return;
    let stale = db.deleteFrom('smpp_binds').where('server', '=', server).where('bound_at', '<', dropBefore);
    if (ids.length > 0) stale = stale.where('id', 'not in', ids);
    await stale.execute();
  },

  /** The binds of `userIds` alive at `now`, counted per user and server. */
  alive(db: Executor, userIds: readonly number[], now: number) {
    return db
      .selectFrom('smpp_binds')
      .select(['smpp_user_id', 'server', (eb) => eb.fn.countAll<number>().as('n')])
      .where('smpp_user_id', 'in', userIds)
      .where('alive_until', '>=', now)
      .groupBy(['smpp_user_id', 'server'])
      .execute();
  },

  /** Deletes binds that stopped being renewed before `before` (their servers died). */
  async pruneDead(db: Executor, before: number): Promise<void> {
    await db.deleteFrom('smpp_binds').where('alive_until', '<', before).execute();
  },
};
