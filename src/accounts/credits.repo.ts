// SQL for credits: the balance's conditional UPDATE on `accounts.credits` and the `credit_ledger` lines. No
// rules here.
import { type Selectable, sql } from 'kysely';
import type { Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';
import type { CreditLedgerTable } from '../store/schema.ts';

/**
 * Whether adding `delta` keeps the balance at or above its floor: zero, or with `postpaid` (1) minus the
 * account's `credit_limit` (zero for a prepaid account). Adding credits always passes.
 */
const aboveFloor = (delta: unknown, postpaid: unknown) =>
  sql<boolean>`(cast(${delta} as bigint) >= 0 or ${sql.ref('credits')} + cast(${delta} as bigint) >= 0 - coalesce(${sql.ref('credit_limit')}, 0) * ${postpaid})`;

export const creditsRepo = {
  /**
   * Adds delta (negative to debit) unless that would take the balance below its floor; undefined if it would.
   * The floor is zero, or with `postpaid` (a send's or a lookup's debit) minus the account's `credit_limit`
   * (zero for a prepaid account): checked in the UPDATE itself, so concurrent debits never pass it. Adding
   * credits is never refused. On every send, so compiled once.
   */
  async addCredits(db: Executor, id: number, delta: number, postpaid = false): Promise<number | undefined> {
    const [row] = await runPrepared<{ credits: number }>(
      db,
      'accounts.addCredits',
      (q) =>
        q
          .updateTable('accounts')
          .set((eb) => ({ credits: eb('credits', '+', slot(1) as unknown as number) }))
          .where('id', '=', slot(0) as unknown as number)
          .where(aboveFloor(slot(1), slot(2)))
          .returning('credits'),
      [id, delta, postpaid ? 1 : 0],
    );
    return row?.credits;
  },

  /** Makes the account postpaid down to minus `limit` credits, or prepaid again (null); false if none. */
  async setCreditLimit(db: Executor, id: number, limit: number | null): Promise<boolean> {
    const result = await db
      .updateTable('accounts')
      .set({ credit_limit: limit })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
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

  /**
   * PostgreSQL: a postpaid debit of `delta` (negative) and its ledger lines in one statement, as sends written
   * together need it. Each line's balance after is the new balance plus its `after` (what the account's later
   * lines of the group take off), so the row stays locked from this statement to the commit only. Undefined,
   * nothing written, when the account cannot pay.
   */
  async debitWithLedger(
    db: Executor,
    id: number,
    delta: number,
    lines: readonly { delta: number; after: number; reason: string; campaign_id: number | null }[],
    now: number,
  ): Promise<number | undefined> {
    const { rows } = await sql<{ credits: number }>`
      with debit as (
        update accounts set credits = credits + cast(${delta} as bigint)
        where id = ${id} and ${aboveFloor(delta, 1)}
        returning credits
      ), lines as (
        insert into credit_ledger (account_id, delta, balance_after, reason, campaign_id, created_at)
        select ${id}, l.delta, debit.credits + l.after, l.reason, l.campaign_id, cast(${now} as bigint)
        from debit, rows from (json_to_recordset(cast(${JSON.stringify(lines)} as json))
          as (delta bigint, after bigint, reason text, campaign_id bigint)) with ordinality
          as l(delta, after, reason, campaign_id, n)
        -- In the group's order, so that the ledger's ids follow its balances.
        order by l.n
      )
      select credits from debit`.execute(db);
    return rows[0]?.credits;
  },
};
