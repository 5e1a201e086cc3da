// SQL for the users of accounts (`users`). No rules here.
import type { Insertable, Selectable } from 'kysely';
import type { DialectName, Executor } from '../store/db.ts';
import type { UsersTable } from '../store/schema.ts';

export type UserRow = Selectable<UsersTable>;

const listed = [
  'id',
  'account_id',
  'email',
  'role',
  'password_hash',
  'link_expires_at',
  'created_at',
] as const;

export const usersRepo = {
  async insert(db: Executor, user: Insertable<UsersTable>): Promise<number> {
    const row = await db.insertInto('users').values(user).returning('id').executeTakeFirstOrThrow();
    return Number(row.id);
  },

  findByEmail(db: Executor, email: string) {
    return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  },

  /** A user of any account (the operator's commands, a session's user). */
  find(db: Executor, id: number) {
    return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /** The user whose open link has this hash, expired or not. */
  findByLink(db: Executor, linkHash: string) {
    return db.selectFrom('users').selectAll().where('link_hash', '=', linkHash).executeTakeFirst();
  },

  list(db: Executor, accountId: number) {
    return db.selectFrom('users').select(listed).where('account_id', '=', accountId).orderBy('id').execute();
  },

  /**
   * The account's users' roles, locked until the transaction ends on PostgreSQL (SQLite has one writer), so
   * two changes to its owners at once cannot both see another owner left.
   */
  rolesForUpdate(db: Executor, dialect: DialectName, accountId: number) {
    let query = db
      .selectFrom('users')
      .select(['id', 'role'])
      .where('account_id', '=', accountId)
      .orderBy('id');
    if (dialect === 'postgres') query = query.forUpdate();
    return query.execute();
  },

  async setRole(db: Executor, accountId: number, id: number, role: string): Promise<void> {
    await db
      .updateTable('users')
      .set({ role })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .execute();
  },

  async delete(db: Executor, accountId: number, id: number): Promise<void> {
    await db.deleteFrom('users').where('account_id', '=', accountId).where('id', '=', id).execute();
  },

  /** Opens a one-time link (replacing any open one). */
  async setLink(db: Executor, id: number, linkHash: string, expiresAt: number): Promise<void> {
    await db
      .updateTable('users')
      .set({ link_hash: linkHash, link_expires_at: expiresAt })
      .where('id', '=', id)
      .execute();
  },

  /**
   * Uses a link once: sets the password and closes the link in one conditional UPDATE, so of two uses at once
   * one wins. The user, or undefined when the link is unknown, used or expired.
   */
  useLink(db: Executor, linkHash: string, passwordHash: string, now: number) {
    return db
      .updateTable('users')
      .set({ password_hash: passwordHash, link_hash: null, link_expires_at: null })
      .where('link_hash', '=', linkHash)
      .where('link_expires_at', '>', now)
      .returning(['id', 'account_id', 'email', 'role'])
      .executeTakeFirst();
  },

  /** A new password; any open link closes with it. */
  async setPassword(db: Executor, id: number, passwordHash: string): Promise<void> {
    await db
      .updateTable('users')
      .set({ password_hash: passwordHash, link_hash: null, link_expires_at: null })
      .where('id', '=', id)
      .execute();
  },

  /** Opens a sign-in's pending second step (replacing any open one). */
  async setSignIn(db: Executor, id: number, signInHash: string, expiresAt: number): Promise<void> {
    await db
      .updateTable('users')
      .set({ sign_in_hash: signInHash, sign_in_expires_at: expiresAt, sign_in_failures: 0 })
      .where('id', '=', id)
      .execute();
  },

  /** Counts a wrong code against a pending sign-in; at `maxFailures` the sign-in closes. */
  async failSignIn(db: Executor, id: number, signInHash: string, maxFailures: number): Promise<void> {
    await db
      .updateTable('users')
      .set((eb) => ({ sign_in_failures: eb('sign_in_failures', '+', 1) }))
      .where('id', '=', id)
      .where('sign_in_hash', '=', signInHash)
      .execute();
    await db
      .updateTable('users')
      .set({ sign_in_hash: null, sign_in_expires_at: null })
      .where('id', '=', id)
      .where('sign_in_hash', '=', signInHash)
      .where('sign_in_failures', '>=', maxFailures)
      .execute();
  },

  /** The user whose pending sign-in has this hash, while it has not expired. */
  findBySignIn(db: Executor, signInHash: string, now: number) {
    return db
      .selectFrom('users')
      .selectAll()
      .where('sign_in_hash', '=', signInHash)
      .where('sign_in_expires_at', '>', now)
      .executeTakeFirst();
  },

  /**
   * Closes a pending sign-in with the time step of the code it was given, in one conditional UPDATE: a step at
   * or before the last accepted one, or a sign-in already closed, changes nothing (false), so a code works once.
   * `step` null: a recovery code was used, the last step stays.
   */
  async closeSignIn(db: Executor, id: number, signInHash: string, step: number | null): Promise<boolean> {
    let query = db
      .updateTable('users')
      .set({ sign_in_hash: null, sign_in_expires_at: null })
      .where('id', '=', id)
      .where('sign_in_hash', '=', signInHash);
    if (step !== null) {
      query = query
        .set({ totp_last_step: step })
        .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]));
    }
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Accepts a code's time step once (false when it is not after the last accepted one). */
  async acceptStep(db: Executor, id: number, step: number): Promise<boolean> {
    const result = await db
      .updateTable('users')
      .set({ totp_last_step: step })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** The secret being enrolled (replacing any before), until a first code confirms it. */
  async setPendingSecret(db: Executor, id: number, secret: string): Promise<void> {
    await db.updateTable('users').set({ totp_pending_secret: secret }).where('id', '=', id).execute();
  },

  /** Two-factor on: the enrolled secret becomes the user's, its confirming code's step the last one used. */
  async confirmSecret(db: Executor, id: number, secret: string, step: number): Promise<boolean> {
    const result = await db
      .updateTable('users')
      .set({ totp_secret: secret, totp_pending_secret: null, totp_last_step: step })
      .where('id', '=', id)
      .where('totp_pending_secret', '=', secret)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Two-factor off: no secret, no pending enrolment or sign-in. */
  async clearTwoFactor(db: Executor, id: number): Promise<void> {
    await db
      .updateTable('users')
      .set({
        totp_secret: null,
        totp_pending_secret: null,
        totp_last_step: null,
        sign_in_hash: null,
        sign_in_expires_at: null,
      })
      .where('id', '=', id)
      .execute();
  },
};
