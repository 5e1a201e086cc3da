// SQL of the idempotency_keys table: claims, leases, answers and pruning. Every statement names the account.
import { sql } from 'kysely';
import type { Executor } from '../store/db.ts';
import type { IdempotencyKeysTable } from '../store/schema.ts';

export type KeyRow = IdempotencyKeysTable;

export interface StoredAnswer {
  status: number;
  httpCode: number;
  response: string;
}

export interface NewClaim {
  route: string;
  requestHash: string;
  claim: string;
  leaseUntil: number;
  createdAt: number;
}

const changed = (result: { numUpdatedRows?: bigint; numDeletedRows?: bigint } | undefined) =>
  Number(result?.numUpdatedRows ?? result?.numDeletedRows ?? 0) > 0;

/** The key's row while `claim` runs it: all that taking over, renewing, finishing or releasing a claim may touch. */
const runningUnder = (accountId: number, key: string, claim: string) => ({
  account_id: accountId,
  key,
  state: 'running',
  claim,
});

export const idempotencyRepo = {
  /** Inserts the key as claimed; false when the account already has it (the primary key refuses a second). */
  async insertClaim(db: Executor, accountId: number, key: string, claim: NewClaim): Promise<boolean> {
    const result = await db
      .insertInto('idempotency_keys')
      .values({
        account_id: accountId,
        key,
        route: claim.route,
        request_hash: claim.requestHash,
        state: 'running',
        claim: claim.claim,
        lease_until: claim.leaseUntil,
        status: null,
        http_code: null,
        response: null,
        created_at: claim.createdAt,
      })
      .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  },

  find(db: Executor, accountId: number, key: string): Promise<KeyRow | undefined> {
    return db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
  },

  /**
   * Reuses a key whose first use has expired, as if it were new; only the row as it was read (its
   * `created_at`) is replaced, so of two requests doing this at once one wins.
   */
  async claimExpired(
    db: Executor,
    accountId: number,
    key: string,
    readCreatedAt: number,
    claim: NewClaim,
  ): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({
        route: claim.route,
        request_hash: claim.requestHash,
        state: 'running',
        claim: claim.claim,
        lease_until: claim.leaseUntil,
        status: null,
        http_code: null,
        response: null,
        created_at: claim.createdAt,
      })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('created_at', '=', readCreatedAt)
      .executeTakeFirst();
    return changed(result);
  },

  /** Takes over a running claim whose lease has run out (its runner died), if no one else has yet. */
  async claimAbandoned(
    db: Executor,
    accountId: number,
    key: string,
    readClaim: string,
    claim: string,
    leaseUntil: number,
  ): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({ claim, lease_until: leaseUntil })
      .where((eb) => eb.and(runningUnder(accountId, key, readClaim)))
      .executeTakeFirst();
    return changed(result);
  },

  /** Extends a claim's lease while its request runs; false once it is no longer this claim's. */
  async renew(
    db: Executor,
    accountId: number,
    key: string,
    claim: string,
    leaseUntil: number,
  ): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({ lease_until: leaseUntil })
      .where((eb) => eb.and(runningUnder(accountId, key, claim)))
      .executeTakeFirst();
    return changed(result);
  },

  /**
   * Stores the answer of the claim's request and closes the claim; false when the claim was lost (another
   * request took it over after its lease ran out), in which case the caller's transaction must not commit.
   */
  async finish(
    db: Executor,
    accountId: number,
    key: string,
    claim: string,
    answer: StoredAnswer,
  ): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        claim: null,
        lease_until: null,
        status: answer.status,
        http_code: answer.httpCode,
        response: answer.response,
      })
      .where((eb) => eb.and(runningUnder(accountId, key, claim)))
      .executeTakeFirst();
    return changed(result);
  },

  /** Deletes a claim whose request failed without an answer worth keeping, so a retry runs it again. */
  async release(db: Executor, accountId: number, key: string, claim: string): Promise<boolean> {
    const result = await db
      .deleteFrom('idempotency_keys')
      .where((eb) => eb.and(runningUnder(accountId, key, claim)))
      .executeTakeFirst();
    return changed(result);
  },

  /** Deletes up to `limit` keys created before `before`, oldest first; returns how many went. */
  async deleteCreatedBefore(db: Executor, before: number, limit: number): Promise<number> {
    const result =
      await sql`delete from ${sql.table('idempotency_keys')} where (${sql.ref('account_id')}, ${sql.ref('key')}) in (select ${sql.ref('account_id')}, ${sql.ref('key')} from ${sql.table('idempotency_keys')} where ${sql.ref('created_at')} < ${before} order by ${sql.ref('created_at')} limit ${limit})`.execute(
        db,
      );
    return Number(result.numAffectedRows ?? 0);
  },
};
