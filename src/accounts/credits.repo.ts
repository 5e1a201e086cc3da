// SQL for credits: the balance's conditional UPDATE on `accounts.credits` and the `credit_ledger` lines. No
// rules here.
import type { Selectable } from 'kysely';
import { insertRows } from '../store/bulk-insert.ts';
import type { Executor } from '../store/db.ts';
import { runPrepared, slot } from '../store/prepared.ts';
import type { CreditLedgerTable } from '../store/schema.ts';

export const creditsRepo = {
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

  /** Ledger lines of sends written together, in one statement per power-of-two batch. */
  async recordLedgerMany(
    db: Executor,
    entries: readonly Omit<Selectable<CreditLedgerTable>, 'id' | 'created_at'>[],
    now: number,
  ): Promise<void> {
    const rows = entries.map((e) => [e.account_id, e.delta, e.balance_after, e.reason, e.campaign_id, now]);
    await insertRows(
      db,
      'credit_ledger',
      ['account_id', 'delta', 'balance_after', 'reason', 'campaign_id', 'created_at'],
      rows,
      1000,
    );
  },
};
