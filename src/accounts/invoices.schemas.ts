// What the invoices' routes answer as JSON (invoices.routes.ts; the PDF download declares its own answer
// there). Imports nothing but typebox and other schema files.
import Type, { type Static } from 'typebox';
import { answer, Id, pageTotals } from '../http/response-schemas.ts';

const amount = Type.String({ description: 'an amount, as text', examples: ['12.00'] });

/** One line of an invoice. */
export const Product = Type.Object({
  description: Type.String(),
  unit_price: amount,
  quantities: Type.String(),
  price: amount,
});
export type ProductView = Static<typeof Product>;

export const Invoice = Type.Object({
  id: Id,
  name: Type.String(),
  creation: Type.String(),
  validation: Type.String(),
  price: amount,
  vat: amount,
  total: amount,
  currency: Type.String(),
  status: Type.String(),
  payment_type: Type.String(),
  products: Type.Array(Product),
  credits: Type.String(),
  vat_rate: Type.String(),
  type: Type.String(),
});
export type InvoiceView = Static<typeof Invoice>;

export const InvoicesAnswer = answer({
  invoices: Type.Array(Invoice),
  lists: Type.Array(Product),
  ...pageTotals,
});
export const InvoiceAnswer = answer({ invoice: Invoice, lists: Type.Array(Product) });
