// SQL for invoices and their yearly numbering. Every read is scoped by account. No rules here.
import type { Insertable, Selectable } from 'kysely';
import type { Page } from '../shared/paging.ts';
import type { Executor } from '../store/db.ts';
import type { InvoicesTable } from '../store/schema.ts';

export type NewInvoice = Omit<Insertable<InvoicesTable>, 'id'>;
export type InvoiceRow = Selectable<InvoicesTable>;

export const invoicesRepo = {
  /**
   * The next invoice number of `year`, taken in the caller's transaction: the year's row stays locked until
   * it commits, so concurrent invoices get consecutive numbers, and a rollback gives its number back.
   */
  async nextNumber(tx: Executor, year: number): Promise<number> {
    const row = await tx
      .insertInto('invoice_numbers')
      .values({ year, last_number: 1 })
      .onConflict((oc) =>
        oc.column('year').doUpdateSet((eb) => ({ last_number: eb('invoice_numbers.last_number', '+', 1) })),
      )
      .returning('last_number')
      .executeTakeFirstOrThrow();
    return Number(row.last_number);
  },

  async insert(tx: Executor, invoice: NewInvoice): Promise<number> {
    const row = await tx.insertInto('invoices').values(invoice).returning('id').executeTakeFirstOrThrow();
    return Number(row.id);
  },

  /** One page of the account's invoices, newest first. */
  list(db: Executor, accountId: number, page: Page): Promise<InvoiceRow[]> {
    return db
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .limit(page.length)
      .offset(page.start)
      .execute();
  },

  async count(db: Executor, accountId: number): Promise<number> {
    const row = await db
      .selectFrom('invoices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  find(db: Executor, accountId: number, id: number): Promise<InvoiceRow | undefined> {
    return db
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
  },
};
