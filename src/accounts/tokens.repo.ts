// SQL for API tokens (`tokens`), joined to their account's parent and lock for authentication. No rules here.
import type { Selectable } from 'kysely';
import type { Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';
import type { AccountsTable, TokensTable } from '../store/schema.ts';

/** A token with what authenticating its caller needs, its account's parent and lock included. */
export interface TokenOwner
  extends Pick<
      Selectable<TokensTable>,
      'account_id' | 'expires_at' | 'allowed_ips' | 'last_used_at' | 'scope'
    >,
    Pick<Selectable<AccountsTable>, 'parent_id' | 'locked'> {
  token_id: Selectable<TokensTable>['id'];
}

export const tokensRepo = {
  async insert(
    db: Executor,
    token: Omit<Selectable<TokensTable>, 'id' | 'created_at' | 'last_used_at'>,
    now: number,
  ): Promise<number> {
    const row = await db
      .insertInto('tokens')
      .values({ ...token, created_at: now, last_used_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  },

  /** The token and its account, for authentication: on every request, so compiled once. */
  async findByHash(db: Executor, tokenHash: string) {
    const [row] = await runPrepared<TokenOwner>(
      db,
      'tokens.findByHash',
      (q) =>
        q
          .selectFrom('tokens')
          .innerJoin('accounts', 'accounts.id', 'tokens.account_id')
          .select([
            'tokens.id as token_id',
            'tokens.account_id',
            'tokens.expires_at',
            'tokens.allowed_ips',
            'tokens.last_used_at',
            'tokens.scope',
            'accounts.parent_id',
            'accounts.locked',
          ])
          .where('tokens.token_hash', '=', slot(0)),
      [tokenHash],
    );
    return row;
  },

  async touch(db: Executor, id: number, now: number): Promise<void> {
    await runPrepared(
      db,
      'tokens.touch',
      (q) =>
        q
          .updateTable('tokens')
          .set({ last_used_at: slot(1) as unknown as number })
          .where('id', '=', slot(0) as unknown as number),
      [id, now],
    );
  },

  list(db: Executor, accountId: number) {
    return db
      .selectFrom('tokens')
      .select(['id', 'name', 'created_at', 'expires_at', 'allowed_ips', 'last_used_at', 'scope'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
  },

  find(db: Executor, accountId: number, id: number) {
    return db
      .selectFrom('tokens')
      .select(['id', 'name', 'created_at', 'expires_at', 'allowed_ips', 'last_used_at', 'scope'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** A token's name, whoever owns it (the audit log's label of its actor). */
  async nameOf(db: Executor, id: number): Promise<string | null> {
    const row = await db.selectFrom('tokens').select('name').where('id', '=', id).executeTakeFirst();
    return row?.name ?? null;
  },

  /** Deletes a token whoever owns it (the operator's revocation); answers its account, undefined if none. */
  async deleteAny(db: Executor, id: number): Promise<number | undefined> {
    const row = await db.deleteFrom('tokens').where('id', '=', id).returning('account_id').executeTakeFirst();
    return row === undefined ? undefined : Number(row.account_id);
  },

  async delete(db: Executor, accountId: number, id: number): Promise<boolean> {
    const result = await db
      .deleteFrom('tokens')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },
};
