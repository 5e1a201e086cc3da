// SQL for accounts, the credit ledger, tokens and the balance notification. No rules here.

import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';
import type {
  AccountsTable,
  BalanceNotificationsTable,
  CreditLedgerTable,
  TokensTable,
} from '../store/schema.ts';

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
] as const;

/** A token with what authenticating its caller needs, its account's parent and lock included. */
export interface TokenOwner
  extends Pick<Selectable<TokensTable>, 'account_id' | 'expires_at' | 'allowed_ips' | 'last_used_at'>,
    Pick<Selectable<AccountsTable>, 'parent_id' | 'locked'> {
  token_id: Selectable<TokensTable>['id'];
}

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
   * Sets the lock of a direct sub-account of `parentId` when it differs; true when this statement changed it
   * (on PostgreSQL the row stays locked until the transaction ends, so two locks of one account serialize).
   */
  async setLocked(db: Executor, parentId: number, id: number, locked: 0 | 1): Promise<boolean> {
    const rows = await db
      .updateTable('accounts')
      .set({ locked })
      .where('id', '=', id)
      .where('parent_id', '=', parentId)
      .where('locked', '!=', locked)
      .returning('id')
      .execute();
    return rows.length > 0;
  },

  /** Adds delta (negative to debit) unless that would take the balance below zero; undefined if it would. */
  /** On every send, so compiled once. */
  async addCredits(db: Executor, id: number, delta: number): Promise<number | undefined> {
    const [row] = await runPrepared<{ credits: number }>(
      db,
      'accounts.addCredits',
      (q) =>
        q
          .updateTable('accounts')
          .set((eb) => ({ credits: eb('credits', '+', slot(1) as unknown as number) }))
          .where('id', '=', slot(0) as unknown as number)
          .where((eb) =>
            eb(eb('credits', '+', slot(1) as unknown as number), '>=', slot(2) as unknown as number),
          )
          .returning('credits'),
      [id, delta, 0],
    );
    return row?.credits;
  },

  /** On every paid send, so compiled once. */
  async recordLedger(
    db: Executor,
    entry: Omit<Selectable<CreditLedgerTable>, 'id' | 'created_at'>,
    now: number,
  ): Promise<void> {
    await runPrepared(
      db,
      'accounts.recordLedger',
      (q) =>
        q.insertInto('credit_ledger').values({
          account_id: slot(0) as unknown as number,
          delta: slot(1) as unknown as number,
          balance_after: slot(2) as unknown as number,
          reason: slot(3),
          campaign_id: slot(4) as unknown as number,
          created_at: slot(5) as unknown as number,
        }),
      [entry.account_id, entry.delta, entry.balance_after, entry.reason, entry.campaign_id, now],
    );
  },
};

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
      .select(['id', 'name', 'created_at', 'expires_at', 'allowed_ips', 'last_used_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
  },

  find(db: Executor, accountId: number, id: number) {
    return db
      .selectFrom('tokens')
      .select(['id', 'name', 'created_at', 'expires_at', 'allowed_ips', 'last_used_at'])
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
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

export type NotificationFields = Omit<BalanceNotificationsTable, 'account_id' | 'updated_at' | 'armed'>;

export const notificationRepo = {
  find(db: Executor, accountId: number) {
    return db
      .selectFrom('balance_notifications')
      .select(['alert_trigger', 'alert_email', 'alert_gsm', 'email', 'phone_number'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  },

  /** A new row starts armed; `rearm` arms an existing one again (otherwise its flag is left as it is). */
  async upsert(
    db: Executor,
    accountId: number,
    fields: NotificationFields,
    now: number,
    rearm: boolean,
  ): Promise<void> {
    await db
      .insertInto('balance_notifications')
      .values({ account_id: accountId, ...fields, updated_at: now })
      .onConflict((oc) =>
        oc.column('account_id').doUpdateSet({ ...fields, updated_at: now, ...(rearm ? { armed: 1 } : {}) }),
      )
      .execute();
  },
};
