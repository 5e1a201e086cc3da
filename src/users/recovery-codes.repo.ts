// SQL for users' two-factor recovery codes (`user_recovery_codes`). No rules here.
import type { Executor } from '../store/db.ts';

export const recoveryCodesRepo = {
  /** The user's codes become these (hashes); the ones before stop working. */
  async replace(db: Executor, userId: number, codeHashes: readonly string[]): Promise<void> {
    await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
    await db
      .insertInto('user_recovery_codes')
      .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, used_at: null })))
      .execute();
  },

  /** Uses one code once, in one conditional UPDATE: false when unknown or already used. */
  async use(db: Executor, userId: number, codeHash: string, now: number): Promise<boolean> {
    const result = await db
      .updateTable('user_recovery_codes')
      .set({ used_at: now })
      .where('user_id', '=', userId)
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async unused(db: Executor, userId: number): Promise<number> {
    const row = await db
      .selectFrom('user_recovery_codes')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async deleteAll(db: Executor, userId: number): Promise<void> {
    await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
  },
};
