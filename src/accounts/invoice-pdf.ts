// An invoice as a one-page A4 PDF (pdfkit, its built-in Helvetica: no font file to ship). pdfkit is loaded at the
// first invoice rendered, not when the process starts: it was a fifth of a second of every start (each `pigeon`
// command, each server process), for a page most processes never draw.

/** The customer block of an invoice: the account's profile (GET /account's fields) when it was issued. */
export interface InvoiceCustomer {
  client_id: string;
  email: string;
  firstname: string;
  lastname: string;
  company: string;
  address1: string;
  address2: string;
  zip: string;
  city: string;
  country: string;
  country_code: string;
  phone: string;
}

export interface InvoicePdfInput {
  name: string;
  creation: string;
  validation: string;
  price: string;
  vat: string;
  vat_rate: string;
  total: string;
  currency: string;
  status: string;
  payment_type: string;
  products: { description: string; unit_price: string; quantities: string; price: string }[];
  issuer: string[];
  customer: InvoiceCustomer;
  /** The document's creation date, so one invoice renders the same every time. */
  createdAt: number;
}

// Characters the standard fonts' WinAnsi encoding has beyond Latin-1.
const winAnsiExtras = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/**
 * One line of text the built-in fonts can draw: Latin-1 and WinAnsi's extras as they are, other letters
 * without their accents when that makes them Latin (`ő` becomes `o`, `ł` is `?`), control characters a
 * space, anything else `?`.
 */
export function drawable(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || winAnsiExtras.has(char)) {
      out += char;
      continue;
    }
    if (code < 0x20) {
      out += ' ';
      continue;
    }
    const base = char.normalize('NFKD').replace(/\p{M}/gu, '');
    out += /^[\x20-\x7e]+$/.test(base) ? base : '?';
  }
  return out;
}

const left = 50;
const right = 545;

/** Renders the invoice; resolves with the whole file. */
export async function renderInvoicePdf(invoice: InvoicePdfInput): Promise<Buffer> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    margin: left,
    info: {
      Title: `Invoice ${invoice.name}`,
      Author: drawable(invoice.issuer[0] ?? ''),
      CreationDate: new Date(invoice.createdAt),
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const money = (amount: string) => `${amount} ${invoice.currency}`;
  const c = invoice.customer;

  doc.font('Helvetica-Bold').fontSize(20).text('INVOICE', left, 50);
  doc.font('Helvetica').fontSize(11).text(invoice.name, left, 76);

  // Issuer on the left, customer on the right.
  let y = 120;
  doc.font('Helvetica-Bold').fontSize(10).text('From', left, y);
  doc.text('Billed to', 320, y);
  doc.font('Helvetica').fontSize(10);
  const issuerTop = y + 16;
  doc.text(invoice.issuer.map(drawable).join('\n'), left, issuerTop, { width: 240 });
  const issuerBottom = doc.y;
  const customerLines = [
    c.company,
    [c.firstname, c.lastname].filter((s) => s !== '').join(' '),
    c.address1,
    c.address2,
    [c.zip, c.city].filter((s) => s !== '').join(' '),
    c.country,
    c.email,
    c.phone,
    `Account ${c.client_id}`,
  ].filter((line) => line !== '');
  doc.text(customerLines.map(drawable).join('\n'), 320, issuerTop, { width: 225 });
  y = Math.max(issuerBottom, doc.y) + 24;

  const facts: [string, string][] = [
    ['Invoice number', invoice.name],
    ['Date', invoice.creation],
    ['Paid on', invoice.validation || '-'],
    ['Status', invoice.status],
    ['Payment', invoice.payment_type],
  ];
  for (const [label, value] of facts) {
    doc.font('Helvetica-Bold').text(label, left, y, { width: 110 });
    doc.font('Helvetica').text(drawable(value), left + 110, y);
    y += 15;
  }

  // The lines: description, quantity, unit price, amount.
  y += 20;
  const columns = [
    { title: 'Description', x: left, width: 235, align: 'left' as const },
    { title: 'Quantity', x: 290, width: 70, align: 'right' as const },
    { title: `Unit price (${invoice.currency})`, x: 365, width: 95, align: 'right' as const },
    { title: `Amount (${invoice.currency})`, x: 465, width: 80, align: 'right' as const },
  ];
  doc.font('Helvetica-Bold');
  for (const col of columns) doc.text(col.title, col.x, y, { width: col.width, align: col.align });
  y += 16;
  doc.moveTo(left, y).lineTo(right, y).stroke();
  y += 6;
  doc.font('Helvetica');
  for (const product of invoice.products) {
    const cells = [drawable(product.description), product.quantities, product.unit_price, product.price];
    let rowBottom = y;
    cells.forEach((cell, i) => {
      const col = columns[i];
      doc.text(cell, col.x, y, { width: col.width, align: col.align });
      rowBottom = Math.max(rowBottom, doc.y);
    });
    y = rowBottom + 6;
  }
  doc.moveTo(left, y).lineTo(right, y).stroke();
  y += 10;

  const totals: [string, string, boolean][] = [
    ['Total excl. VAT', money(invoice.price), false],
    [`VAT ${invoice.vat_rate} %`, money(invoice.vat), false],
    ['Total incl. VAT', money(invoice.total), true],
  ];
  for (const [label, amount, strong] of totals) {
    doc.font(strong ? 'Helvetica-Bold' : 'Helvetica');
    doc.text(label, 320, y, { width: 130 });
    doc.text(amount, 450, y, { width: 95, align: 'right' });
    y += 16;
  }

  doc.end();
  return done;
}
