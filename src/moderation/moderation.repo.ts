// SQL for the moderation room's tables: `sender_ids`, `content_rules` and `operator_accounts`. No rules here.
import type { Executor } from '../store/db.ts';

const senderColumns = [
  'id',
  'account_id',
  'sender',
  'state',
  'note',
  'reason',
  'created_at',
  'decided_at',
] as const;

export const senderIdsRepo = {
  find(db: Executor, id: number) {
    return db.selectFrom('sender_ids').select(senderColumns).where('id', '=', id).executeTakeFirst();
  },

  findByName(db: Executor, accountId: number, sender: string) {
    return db
      .selectFrom('sender_ids')
      .select(senderColumns)
      .where('account_id', '=', accountId)
      .where('sender', '=', sender)
      .executeTakeFirst();
  },

  /** Asks for a sender ID; answers its id (a refused one asked again is pending again, with the new note). */
  async request(db: Executor, accountId: number, sender: string, note: string | null, now: number) {
    const existing = await senderIdsRepo.findByName(db, accountId, sender);
    if (existing) {
      if (existing.state === 'refused') {
        await db
          .updateTable('sender_ids')
          .set({ state: 'pending', note, reason: null, created_at: now, decided_at: null })
          .where('id', '=', existing.id)
          .execute();
      }
      return Number(existing.id);
    }
    const row = await db
      .insertInto('sender_ids')
      .values({
        account_id: accountId,
        sender,
        state: 'pending',
        note,
        reason: null,
        created_at: now,
        decided_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  },

  /** The requests of an account, newest first. */
  ofAccount(db: Executor, accountId: number) {
    return db
      .selectFrom('sender_ids')
      .select(senderColumns)
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .execute();
  },

  /** Every account's requests, in `state` when given, oldest first after `afterId` (keyset). */
  list(db: Executor, state: string | undefined, afterId: number, limit: number) {
    let query = db.selectFrom('sender_ids').select(senderColumns).where('id', '>', afterId);
    if (state !== undefined) query = query.where('state', '=', state);
    return query.orderBy('id').limit(limit).execute();
  },

  /** The approved sender IDs of these accounts (an account and its parent). */
  async approved(db: Executor, accountIds: readonly number[]): Promise<string[]> {
    const rows = await db
      .selectFrom('sender_ids')
      .select('sender')
      .where('account_id', 'in', accountIds)
      .where('state', '=', 'approved')
      .execute();
    return rows.map((r) => r.sender);
  },

  /** The operator's decision; true when the row changed (it was not already in that state). */
  async decide(db: Executor, id: number, state: 'approved' | 'refused', reason: string | null, now: number) {
    const result = await db
      .updateTable('sender_ids')
      .set({ state, reason, decided_at: now })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};

const ruleColumns = ['id', 'account_id', 'kind', 'value', 'action', 'created_at'] as const;

export const contentRulesRepo = {
  /** The instance's rules and those of these accounts (an account and its parent). */
  applying(db: Executor, accountIds: readonly number[]) {
    return db
      .selectFrom('content_rules')
      .select(ruleColumns)
      .where((eb) => eb.or([eb('account_id', 'is', null), eb('account_id', 'in', accountIds)]))
      .orderBy('id')
      .execute();
  },

  list(db: Executor, accountId: number | undefined) {
    let query = db.selectFrom('content_rules').select(ruleColumns);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    return query.orderBy('id').execute();
  },

  async insert(
    db: Executor,
    rule: { account_id: number | null; kind: string; value: string; action: string; created_at: number },
  ): Promise<number> {
    const row = await db.insertInto('content_rules').values(rule).returning('id').executeTakeFirstOrThrow();
    return Number(row.id);
  },

  find(db: Executor, id: number) {
    return db.selectFrom('content_rules').select(ruleColumns).where('id', '=', id).executeTakeFirst();
  },

  async remove(db: Executor, id: number): Promise<boolean> {
    const result = await db.deleteFrom('content_rules').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },
};

export const operatorAccountsRepo = {
  async isOperator(db: Executor, accountId: number): Promise<boolean> {
    const row = await db
      .selectFrom('operator_accounts')
      .select('account_id')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row !== undefined;
  },

  /** True when the account was not an operator account before. */
  async grant(db: Executor, accountId: number, now: number): Promise<boolean> {
    if (await operatorAccountsRepo.isOperator(db, accountId)) return false;
    await db.insertInto('operator_accounts').values({ account_id: accountId, granted_at: now }).execute();
    return true;
  },

  async revoke(db: Executor, accountId: number): Promise<boolean> {
    const result = await db
      .deleteFrom('operator_accounts')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  list(db: Executor) {
    return db
      .selectFrom('operator_accounts')
      .select(['account_id', 'granted_at'])
      .orderBy('account_id')
      .execute();
  },
};
