import type { ColumnBuilderCallback, Kysely } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema before it exists.
type AnyDb = Kysely<any>;

const notNull: ColumnBuilderCallback = (c) => c.notNull();

/**
 * Invoices (GET /account/invoice…), owned by accounts: one per credit purchase the operator records and one
 * per transfer a sub-account receives, written in the transaction that moves the credits. Amounts are whole
 * cents; the VAT rate (basis points), the issuer and the customer's profile are copied in when the invoice is
 * issued, so an invoice never changes afterwards. `invoice_numbers` holds the last number given in each
 * year: its row is incremented in the invoice's transaction, so numbers follow each other without gaps (a
 * rolled-back transaction gives its number back).
 */
export async function up(db: AnyDb, postgres: boolean): Promise<void> {
  await db.schema
    .createTable('invoices')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('account_id', 'bigint', notNull)
    // The invoice number, PG-2026-000042.
    .addColumn('name', 'text', (c) => c.notNull().unique())
    // purchase (the operator's `credits add --price`) or transfer (from the parent account).
    .addColumn('kind', 'text', notNull)
    .addColumn('description', 'text', notNull)
    .addColumn('credits', 'bigint', notNull)
    .addColumn('price_cents', 'bigint', notNull)
    .addColumn('vat_basis_points', 'integer', notNull)
    .addColumn('vat_cents', 'bigint', notNull)
    .addColumn('total_cents', 'bigint', notNull)
    .addColumn('currency', 'text', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('payment_type', 'text', notNull)
    // The account that gave the credits, for a transfer.
    .addColumn('from_account_id', 'bigint')
    // The issuer's lines and the customer's profile (JSON) as they were when the invoice was issued.
    .addColumn('issuer', 'text', notNull)
    .addColumn('customer', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('validated_at', 'bigint')
    .execute();
  // An account's invoices, newest first.
  await db.schema.createIndex('invoices_account').on('invoices').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('invoice_numbers')
    .addColumn('year', 'integer', (c) => c.primaryKey())
    .addColumn('last_number', 'bigint', notNull)
    .execute();
}
