// Invoices of credits received: recorded in the transaction that moves the credits (an operator's purchase,
// a parent's transfer), read back as SMSFactor's invoice objects, and rendered as PDF.
import { DateTime } from 'luxon';
import type { AuthContext } from '../shared/auth-context.ts';
import type { Clock } from '../shared/clock.ts';
import { ApiError } from '../shared/errors.ts';
import { idIn, idOut } from '../shared/ids.ts';
import { parsePage } from '../shared/paging.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import type { Db, Executor } from '../store/db.ts';
import { accountView } from './account-profile.ts';
import { accountsRepo } from './accounts.repo.ts';
import {
  formatBasisPoints,
  formatCents,
  parseCurrency,
  parsePriceCents,
  percentToBasisPoints,
  unitPrice,
  vatCents,
} from './invoice-amounts.ts';
import { type InvoiceCustomer, renderInvoicePdf } from './invoice-pdf.ts';
import { type InvoiceRow, invoicesRepo } from './invoices.repo.ts';

export interface InvoiceOptions {
  /** VAT in percent with up to 2 decimals (`20`, `5.5`). */
  vatPercent: string;
  /** The currency of transfers' invoices, and of purchases that name none. */
  currency: string;
  /** The issuer's name and address, lines separated by `|`. */
  issuer: string;
  /** Invoice numbers are `PREFIX-YEAR-NNNNNN`. */
  prefix: string;
}

/**
 * Adds credits to an account and runs `inTx` in the same transaction (`credits.addCredits`, wired in
 * `src/deps.ts`); answers the balance after.
 */
export interface CreditTopUp {
  add(accountId: number, credits: number, inTx: (tx: Executor) => Promise<void>): Promise<number>;
}

export interface PurchaseRequest {
  /** The price of the credits before VAT, as the operator typed it (`12.50`). */
  price: string;
  /** ISO 4217; the configured currency when absent. */
  currency?: string;
}

interface NewInvoiceInput {
  accountId: number;
  kind: 'purchase' | 'transfer';
  description: string;
  credits: number;
  priceCents: number;
  currency: string;
  paymentType: string;
  fromAccountId: number | null;
}

export type InvoicesService = ReturnType<typeof createInvoicesService>;

export function createInvoicesService(deps: {
  db: Db;
  clock: Clock;
  timezone: string;
  options: InvoiceOptions;
  topUp: CreditTopUp;
}) {
  const { db, clock, timezone, options, topUp } = deps;
  const { wallTime } = zonedTime(timezone);
  const vatBasisPoints = percentToBasisPoints(options.vatPercent);
  const issuerLines = options.issuer
    .split('|')
    .map((line) => line.trim())
    .filter((line) => line !== '');

  /**
   * Issues an invoice in the caller's transaction: the next number of the year (in TIMEZONE), the VAT at
   * the configured rate rounded half up to the cent, and the issuer and the customer's profile as they are
   * now, so the invoice never changes afterwards.
   */
  async function issue(tx: Executor, input: NewInvoiceInput): Promise<{ id: number; name: string }> {
    const now = clock.now();
    const year = DateTime.fromMillis(now, { zone: timezone }).year;
    const name = `${options.prefix}-${year}-${String(await invoicesRepo.nextNumber(tx, year)).padStart(6, '0')}`;
    const profile = await accountsRepo.profile(tx, input.accountId);
    if (!profile) throw ApiError.notFound(`account ${input.accountId} does not exist`);
    const view = accountView(profile, 0, 'text');
    const customer: InvoiceCustomer = {
      client_id: view.client_id,
      email: view.email,
      firstname: view.firstname,
      lastname: view.lastname,
      company: view.company,
      address1: view.address1,
      address2: view.address2,
      zip: view.zip,
      city: view.city,
      country: view.country,
      country_code: view.country_code,
      phone: view.phone,
    };
    const vat = vatCents(input.priceCents, vatBasisPoints);
    const id = await invoicesRepo.insert(tx, {
      account_id: input.accountId,
      name,
      kind: input.kind,
      description: input.description,
      credits: input.credits,
      price_cents: input.priceCents,
      vat_basis_points: vatBasisPoints,
      vat_cents: vat,
      total_cents: input.priceCents + vat,
      currency: input.currency,
      // Both kinds are settled when recorded: the operator records a purchase once paid, a transfer is free.
      status: 'paid',
      payment_type: input.paymentType,
      from_account_id: input.fromAccountId,
      issuer: issuerLines.join('\n'),
      customer: JSON.stringify(customer),
      created_at: now,
      validated_at: now,
    });
    return { id, name };
  }

  /**
   * The invoice object: amounts are strings with 2 decimals, as the Java SDK declares every field a String;
   * `vat` is the VAT amount (Pigeon's `vat_rate` gives the rate) and `total` the price with it; dates are
   * `Y-m-d H:i:s` in TIMEZONE. Pigeon adds `credits`, `vat_rate` and `type` (purchase or transfer).
   */
  const invoiceView = (row: InvoiceRow) => {
    const priceCents = Number(row.price_cents);
    const credits = Number(row.credits);
    return {
      id: idOut(row.id),
      name: row.name,
      creation: wallTime(Number(row.created_at)),
      validation: row.validated_at === null ? '' : wallTime(Number(row.validated_at)),
      price: formatCents(priceCents),
      vat: formatCents(Number(row.vat_cents)),
      total: formatCents(Number(row.total_cents)),
      currency: row.currency,
      status: row.status,
      payment_type: row.payment_type,
      products: [
        {
          description: row.description,
          unit_price: unitPrice(priceCents, credits),
          quantities: String(credits),
          price: formatCents(priceCents),
        },
      ],
      credits: String(credits),
      vat_rate: formatBasisPoints(Number(row.vat_basis_points)),
      type: row.kind,
    };
  };

  async function own(auth: AuthContext, rawId: string): Promise<InvoiceRow> {
    const id = idIn(rawId);
    const row = id === undefined ? undefined : await invoicesRepo.find(db, auth.accountId, id);
    if (!row) throw ApiError.notFound(`invoice "${rawId}" not found`);
    return row;
  }

  return {
    /**
     * The operator's `credits add ACCOUNT N --price P [--currency C]`: the credits and their invoice in one
     * transaction. Bad values are a -7 naming the option, checked before anything is written.
     */
    async purchase(accountId: number, credits: number, request: PurchaseRequest) {
      const priceCents = parsePriceCents(request.price, '--price');
      const currency =
        request.currency === undefined ? options.currency : parseCurrency(request.currency, '--currency');
      if (!Number.isSafeInteger(credits) || credits <= 0) {
        throw ApiError.data(`credits "${credits}" must be a positive whole number: a purchase adds credits`);
      }
      let invoice: { id: number; name: string } | undefined;
      const balance = await topUp.add(accountId, credits, async (tx) => {
        invoice = await issue(tx, {
          accountId,
          kind: 'purchase',
          description: 'SMS credits',
          credits,
          priceCents,
          currency,
          paymentType: 'manual',
          fromAccountId: null,
        });
      });
      return { credits: balance, invoice_id: idOut(invoice!.id), invoice: invoice!.name };
    },

    /**
     * A transfer's invoice for the sub-account that received the credits, in the transfer's transaction: at
     * price 0, since the parent paid for the credits on its own invoice.
     */
    recordTransfer(tx: Executor, toAccountId: number, credits: number, fromAccountId: number) {
      return issue(tx, {
        accountId: toAccountId,
        kind: 'transfer',
        description: `SMS credits transferred from account ${fromAccountId}`,
        credits,
        priceCents: 0,
        currency: options.currency,
        paymentType: 'transfer',
        fromAccountId,
      });
    },

    /**
     * GET /account/invoice: the caller's invoices, newest first, a page at a time. `lists` repeats their
     * products in that order: the Java SDK's InvoiceGetResponse reads nothing else.
     */
    async list(auth: AuthContext, query: { start?: string; length?: string }) {
      const page = parsePage(query);
      const rows = await invoicesRepo.list(db, auth.accountId, page);
      const total = await invoicesRepo.count(db, auth.accountId);
      const invoices = rows.map(invoiceView);
      return {
        invoices,
        lists: invoices.flatMap((invoice) => invoice.products),
        totalRecords: total,
        totalDisplayRecords: total,
      };
    },

    /** GET /account/invoice/:id: one of the caller's invoices (-5 for any other id), its products in `lists`. */
    async get(auth: AuthContext, rawId: string) {
      const invoice = invoiceView(await own(auth, rawId));
      return { invoice, lists: invoice.products };
    },

    /** GET /account/invoice/:id/download: the invoice as a PDF, named by its number. */
    async download(auth: AuthContext, rawId: string): Promise<{ filename: string; pdf: Buffer }> {
      const row = await own(auth, rawId);
      const view = invoiceView(row);
      const pdf = await renderInvoicePdf({
        ...view,
        issuer: row.issuer.split('\n'),
        customer: JSON.parse(row.customer) as InvoiceCustomer,
        createdAt: Number(row.created_at),
      });
      return { filename: `${row.name}.pdf`, pdf };
    },
  };
}
