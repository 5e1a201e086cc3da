// Invoices: a purchase recorded by the operator (`credits add --price`) and a transfer a sub-account receives
// each issue one, in the transaction that moves the credits; GET /account/invoice and /account/invoice/:id
// read the caller's own in SMSFactor's shape (JSON and XML), and /download renders a real PDF.
import PDFParser from 'pdf2json';
import { describe, expect, it } from 'vitest';
import {
  formatCents,
  parsePriceCents,
  percentToBasisPoints,
  unitPrice,
  vatCents,
} from '../../src/accounts/invoice-amounts.ts';
import { drawable } from '../../src/accounts/invoice-pdf.ts';
import { ApiError } from '../../src/shared/errors.ts';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';

/** Each CLI call starts a whole process (about a second, several on a loaded machine). */
const cliCallsMs = 120_000;

const pigeon = pigeonOn;

/** The text of a PDF, as a reader extracts it. */
function pdfText(pdf: Buffer): Promise<string> {
  // A fresh copy: the parser reads the Buffer's whole ArrayBuffer, which for a small Buffer is a shared pool.
  const copy = Buffer.from(new Uint8Array(pdf).buffer);
  const parser = new PDFParser(null, true);
  return new Promise((resolve, reject) => {
    parser.on('pdfParser_dataError', (error) => reject(error));
    parser.on('pdfParser_dataReady', () => resolve(parser.getRawTextContent()));
    parser.parseBuffer(copy);
  });
}

/** An XML answer's repeated element as an array, however many times it was repeated. */
const many = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined || value === '' ? [] : [value];

const wallTime = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const invoiceNumber = /^PG-(\d{4})-(\d{6})$/;

describe('invoice amounts', () => {
  it('are exact in cents: VAT rounded half up, unit prices to 6 decimals at most', () => {
    expect(parsePriceCents('12.50', '--price')).toBe(1250);
    expect(parsePriceCents('12.5', '--price')).toBe(1250);
    expect(parsePriceCents('12', '--price')).toBe(1200);
    expect(parsePriceCents('0,07', '--price')).toBe(7);
    expect(vatCents(1250, 2000)).toBe(250);
    // 0.1 + 0.2 style drift cannot happen: 10.01 × 20 % = 2.002 → 2.00; 0.03 × 20 % = 0.006 → 0.01.
    expect(vatCents(1001, 2000)).toBe(200);
    expect(vatCents(3, 2000)).toBe(1);
    // Half a cent rounds up: 0.25 × 10 % = 0.025 → 0.03; 12.50 × 5.5 % = 0.6875 → 0.69.
    expect(vatCents(25, 1000)).toBe(3);
    expect(vatCents(1250, percentToBasisPoints('5.5'))).toBe(69);
    expect(vatCents(99_999_999_999, 10_000)).toBe(99_999_999_999);
    expect(formatCents(1500)).toBe('15.00');
    expect(formatCents(7)).toBe('0.07');
    expect(unitPrice(1250, 1000)).toBe('0.0125');
    expect(unitPrice(1000, 3)).toBe('3.333333');
    expect(unitPrice(5000, 1)).toBe('50.00');
    expect(unitPrice(0, 300)).toBe('0.00');
    for (const bad of ['abc', '-5', '12.505', '1e3', '', '1234567890', '12.']) {
      expect(() => parsePriceCents(bad, '--price'), bad).toThrow(ApiError);
    }
  });

  it('the PDF text keeps what the built-in fonts can draw', () => {
    expect(drawable('Société Générale — 15.00 €')).toBe('Société Générale — 15.00 €');
    expect(drawable('Łódź Őrs Œuvre 東京\nx')).toBe('?ódz Ors Œuvre ?? x');
  });
});

describeEachDialect('invoices', (h) => {
  const list = (a: TestAccount, accept?: string, query?: Record<string, string>) =>
    call(h().app, 'GET', '/account/invoice', { token: a.token, accept, query });
  const get = (a: TestAccount, id: string, accept?: string) =>
    call(h().app, 'GET', `/account/invoice/${id}`, { token: a.token, accept });
  const purchase = (a: TestAccount, credits: number, price: string, currency?: string) =>
    h().deps.services.invoices.purchase(a.id, credits, { price, currency });
  const emailOf = async (a: TestAccount) =>
    (await call(h().app, 'GET', '/account', { token: a.token })).body.account.email as string;
  const download = (a: TestAccount, id: string, accept = 'application/json') =>
    h().app.inject({
      method: 'GET',
      url: `/account/invoice/${id}/download`,
      headers: { authorization: `Bearer ${a.token}`, accept },
    });
  const invoiceRows = (accountId: number) =>
    h().deps.store.db.selectFrom('invoices').selectAll().where('account_id', '=', accountId).execute();

  it(
    'credits add --price records the credits and an invoice with exact totals (12.50 + 20 % VAT = 15.00)',
    async () => {
      const a = await h().account({ credits: 10 });
      const r = await pigeon(h().databaseUrl, 'credits', 'add', String(a.id), '1000', '--price', '12.50');
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const printed = JSON.parse(r.stdout);
      expect(printed).toEqual({
        account_id: String(a.id),
        credits: 1010,
        invoice_id: expect.stringMatching(/^[1-9]\d*$/),
        invoice: expect.stringMatching(invoiceNumber),
      });
      expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(1010);

      const listed = await list(a);
      expect(listed.body).toEqual({
        status: 1,
        message: 'OK',
        invoices: [
          {
            id: printed.invoice_id,
            name: printed.invoice,
            creation: expect.stringMatching(wallTime),
            validation: expect.stringMatching(wallTime),
            price: '12.50',
            vat: '2.50',
            total: '15.00',
            currency: 'EUR',
            status: 'paid',
            payment_type: 'manual',
            products: [
              { description: 'SMS credits', unit_price: '0.0125', quantities: '1000', price: '12.50' },
            ],
            credits: '1000',
            vat_rate: '20.00',
            type: 'purchase',
          },
        ],
        // The products again, top level: all the Java SDK's InvoiceGetResponse reads.
        lists: [{ description: 'SMS credits', unit_price: '0.0125', quantities: '1000', price: '12.50' }],
        totalRecords: 1,
        totalDisplayRecords: 1,
      });
      const invoice = listed.body.invoices[0];
      // The year of the number is the year the invoice was issued.
      expect(invoice.name.slice(3, 7)).toBe(invoice.creation.slice(0, 4));

      // A currency in lower case is an ISO code all the same.
      const usd = await pigeon(
        h().databaseUrl,
        'credits',
        'add',
        String(a.id),
        '5',
        '--price',
        '0.07',
        '--currency',
        'usd',
      );
      expect(usd.code).toBe(0);
      const second = await get(a, JSON.parse(usd.stdout).invoice_id);
      expect(second.body.invoice).toMatchObject({
        price: '0.07',
        vat: '0.01',
        total: '0.08',
        currency: 'USD',
        products: [{ description: 'SMS credits', unit_price: '0.014', quantities: '5', price: '0.07' }],
      });
      // Numbers follow each other.
      const [, , n1] = invoiceNumber.exec(printed.invoice)!;
      const [, , n2] = invoiceNumber.exec(second.body.invoice.name)!;
      expect(Number(n2)).toBe(Number(n1) + 1);

      // Without --price, credits add is a plain adjustment: no invoice.
      const plain = await pigeon(h().databaseUrl, 'credits', 'add', String(a.id), '7');
      expect(JSON.parse(plain.stdout)).toEqual({ account_id: String(a.id), credits: 1022 });
      expect((await list(a)).body.totalRecords).toBe(2);
    },
    cliCallsMs,
  );

  it(
    'credits add with a bad --price or --currency exits 1 with a clear message, and changes nothing',
    async () => {
      const a = await h().account({ credits: 10 });
      const cases: [string[], RegExp][] = [
        [['100', '--price', 'abc'], /--price "abc" must be an amount of at least 0 with at most 2 decimals/],
        [['100', '--price=-5'], /--price "-5" must be an amount/],
        [['100', '--price', '10', '--currency', 'EURO'], /--currency "EURO" must be a 3-letter ISO 4217/],
        [['100', '--currency', 'EUR'], /--currency is the currency of --price: give both/],
        [['--price', '10', '--', '-5'], /a purchase adds credits/],
      ];
      for (const [args, message] of cases) {
        const r = await pigeon(h().databaseUrl, 'credits', 'add', String(a.id), ...args);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr, args.join(' ')).toMatch(message);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stdout).toBe('');
      }
      const nobody = await pigeon(h().databaseUrl, 'credits', 'add', '99999999', '10', '--price', '1');
      expect(nobody.code).toBe(1);
      expect(nobody.stderr).toMatch(/account 99999999 does not exist/);
      expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(10);
      expect(await invoiceRows(a.id)).toEqual([]);
    },
    cliCallsMs,
  );

  it('a transfer issues the receiving sub-account an invoice at price 0; taking credits back issues none', async () => {
    const parent = await h().account({ credits: 500 });
    const child = await h().account({ parentId: parent.id, credits: 0 });
    const given = await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      json: { transfer: { to_account: String(child.id), credits: 300 } },
    });
    expect(given.body).toMatchObject({ status: 1, credits: 200, child_credits: 300 });
    const childInvoices = await list(child);
    expect(childInvoices.body.invoices).toEqual([
      {
        id: expect.stringMatching(/^[1-9]\d*$/),
        name: expect.stringMatching(invoiceNumber),
        creation: '2026-01-05 10:00:00',
        validation: '2026-01-05 10:00:00',
        price: '0.00',
        vat: '0.00',
        total: '0.00',
        currency: 'EUR',
        status: 'paid',
        payment_type: 'transfer',
        products: [
          {
            description: `SMS credits transferred from account ${parent.id}`,
            unit_price: '0.00',
            quantities: '300',
            price: '0.00',
          },
        ],
        credits: '300',
        vat_rate: '20.00',
        type: 'transfer',
      },
    ]);
    // The parent gave: no invoice of its own.
    expect((await list(parent)).body.invoices).toEqual([]);

    const back = await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      json: { transfer: { to_account: String(child.id), credits: -100 } },
    });
    expect(back.body).toMatchObject({ status: 1, credits: 300, child_credits: 200 });
    expect((await list(child)).body.totalRecords).toBe(1);
    expect((await list(parent)).body.totalRecords).toBe(0);
  });

  it('a transfer that fails issues nothing and uses no number: numbers have no gaps', async () => {
    const parent = await h().account({ credits: 50 });
    const child = await h().account({ parentId: parent.id, credits: 0 });
    const first = await purchase(parent, 10, '1.00');
    const short = await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      json: { transfer: { to_account: String(child.id), credits: 1000 } },
    });
    expect(short.body.status).toBe(-3);
    expect(await invoiceRows(child.id)).toEqual([]);
    const next = await purchase(parent, 10, '1.00');
    const number = (name: string) => Number(invoiceNumber.exec(name)![2]);
    expect(number(next.invoice)).toBe(number(first.invoice) + 1);
  });

  it('numbers restart each year, the year being the one of TIMEZONE', async () => {
    const a = await h().account();
    const before = h().clock.now();
    try {
      // 23:30 UTC on 31 December 2030 is already 2031 in Paris.
      h().clock.set(Date.UTC(2030, 11, 31, 22, 30, 0));
      expect((await purchase(a, 1, '1')).invoice).toBe('PG-2030-000001');
      h().clock.set(Date.UTC(2030, 11, 31, 23, 30, 0));
      const r = await purchase(a, 1, '1');
      expect(r.invoice).toBe('PG-2031-000001');
      expect((await get(a, r.invoice_id)).body.invoice.creation).toBe('2031-01-01 00:30:00');
      expect((await purchase(a, 1, '1')).invoice).toBe('PG-2031-000002');
    } finally {
      h().clock.set(before);
    }
  });

  it('GET /account/invoice lists the newest first, a page at a time; GET /account/invoice/:id reads one', async () => {
    const a = await h().account();
    const bought = [];
    for (const price of ['1.00', '2.00', '3.00']) {
      bought.push(await purchase(a, 100, price));
      h().clock.advance(1000);
    }
    const all = await list(a);
    expect(all.body.invoices.map((i: { id: string }) => i.id)).toEqual(
      bought.map((b) => b.invoice_id).reverse(),
    );
    expect(all.body).toMatchObject({ totalRecords: 3, totalDisplayRecords: 3 });
    const page = await list(a, undefined, { start: '1', length: '1' });
    expect(page.body.invoices.map((i: { price: string }) => i.price)).toEqual(['2.00']);
    expect(page.body).toMatchObject({ totalRecords: 3, totalDisplayRecords: 3 });
    expect((await list(a, undefined, { length: '0' })).body).toMatchObject({
      status: -7,
      details: 'length "0" must be a whole number from 1 to 1000',
    });

    const one = await get(a, bought[0].invoice_id);
    expect(one.body).toEqual({
      status: 1,
      message: 'OK',
      invoice: all.body.invoices[2],
      lists: all.body.invoices[2].products,
    });
    expect(all.body.lists.map((p: { price: string }) => p.price)).toEqual(['3.00', '2.00', '1.00']);
    expect(one.body.invoice).toMatchObject({ price: '1.00', vat: '0.20', total: '1.20' });
  });

  it('reads in XML: every field a string, invoices and products repeated elements', async () => {
    const a = await h().account();
    await purchase(a, 1000, '12.50');
    await purchase(a, 20, '3.00', 'GBP');
    const json = await list(a);
    const xml = await list(a, 'application/xml');
    expect(xml.contentType).toContain('application/xml');
    expect(xml.raw).toContain('<invoices><id>');
    const invoices = many(xml.body.invoices) as Record<string, unknown>[];
    expect(xml.body).toMatchObject({
      status: '1',
      message: 'OK',
      totalRecords: '2',
      totalDisplayRecords: '2',
    });
    expect(invoices).toHaveLength(2);
    expect(invoices.map((i) => ({ ...i, products: many(i.products) }))).toEqual(json.body.invoices);
    expect(many(xml.body.lists)).toEqual(json.body.lists);

    const one = await get(a, json.body.invoices[1].id, 'application/xml');
    expect(one.body.status).toBe('1');
    expect({ ...one.body.invoice, products: many(one.body.invoice.products) }).toEqual(json.body.invoices[1]);
    expect(many(one.body.lists)).toEqual(json.body.invoices[1].products);
    expect(one.body.invoice).toMatchObject({ price: '12.50', vat: '2.50', total: '15.00', currency: 'EUR' });
  });

  it('downloads the invoice as a PDF that carries its number, its total and the customer e-mail', async () => {
    const a = await h().account();
    const { invoice_id, invoice } = await purchase(a, 1000, '12.50');
    // The Java SDK asks with Accept: application/json and reads the bytes.
    const r = await download(a, invoice_id);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/pdf');
    expect(r.headers['content-disposition']).toBe(`attachment; filename="${invoice}.pdf"`);
    expect(r.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(r.rawPayload.subarray(-6).toString('latin1')).toContain('%%EOF');
    const text = await pdfText(r.rawPayload);
    expect(text).toContain(invoice);
    expect(text).toContain('15.00 EUR');
    expect(text).toContain('12.50 EUR');
    expect(text).toContain('2.50 EUR');
    expect(text).toContain(await emailOf(a));
    expect(text).toContain('Pigeon');
    // The same invoice renders the same file.
    expect((await download(a, invoice_id, 'application/xml')).rawPayload.equals(r.rawPayload)).toBe(true);
  });

  it('an account never reads, nor downloads, another account’s invoice: -5 as for an unknown id', async () => {
    const a = await h().account();
    const b = await h().account();
    const parent = await h().account({ credits: 10 });
    const child = await h().account({ parentId: parent.id, credits: 0 });
    const { invoice_id } = await purchase(a, 10, '1.00');
    await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      json: { transfer: { to_account: String(child.id), credits: 5 } },
    });
    const childInvoice = (await list(child)).body.invoices[0].id as string;

    expect((await list(b)).body.invoices).toEqual([]);
    for (const [who, id] of [
      [b, invoice_id],
      // A parent does not read its sub-account's invoices either.
      [parent, childInvoice],
      [child, invoice_id],
    ] as [TestAccount, string][]) {
      expect((await get(who, id)).body).toEqual({
        status: -5,
        message: 'Resource not found',
        details: `invoice "${id}" not found`,
      });
      const dl = await download(who, id);
      expect(dl.statusCode).toBe(200);
      expect(dl.headers['content-type']).toContain('application/json');
      expect(JSON.parse(dl.body)).toEqual({
        status: -5,
        message: 'Resource not found',
        details: `invoice "${id}" not found`,
      });
    }
    const xml = await download(b, invoice_id, 'application/xml');
    expect(xml.headers['content-type']).toContain('application/xml');
    expect(xml.body).toContain('<status>-5</status>');
    // Still there for its owner.
    expect((await get(a, invoice_id)).body.status).toBe(1);
  });

  it('a bad id is -5 on every invoice route, never a 500', async () => {
    const a = await h().account();
    for (const id of ['abc', '0', '-1', '1.5', '99999999999', '99999999999999999999', '%20']) {
      const one = await get(a, id);
      expect(one.httpCode, id).toBe(200);
      expect(one.body.status, id).toBe(-5);
      const dl = await download(a, id);
      expect(dl.statusCode, id).toBe(200);
      expect(JSON.parse(dl.body).status, id).toBe(-5);
    }
    expect((await call(h().app, 'GET', '/account/invoice', {})).body.status).toBe(-1);
    expect((await call(h().app, 'GET', '/account/invoice/1/download', {})).body.status).toBe(-1);
  });

  it('invoices are frozen: the VAT rate and the customer are those of the day they were issued', async () => {
    const a = await h().account();
    const { invoice_id } = await purchase(a, 10, '10.00');
    const rows = await invoiceRows(a.id);
    expect(rows.map((r) => Number(r.vat_basis_points))).toEqual([2000]);
    expect(JSON.parse(rows[0].customer)).toMatchObject({ client_id: String(a.id), email: await emailOf(a) });
    expect((await get(a, invoice_id)).body.invoice).toMatchObject({ vat_rate: '20.00', vat: '2.00' });
  });
});

describeEachDialect(
  'invoices with configured VAT, currency, issuer and prefix',
  (h) => {
    it('uses them: 12.50 at 5.5 % is 0.69 of VAT, 13.19 in all', async () => {
      const parent = await h().account({ credits: 10 });
      const child = await h().account({ parentId: parent.id, credits: 0 });
      const bought = await h().deps.services.invoices.purchase(parent.id, 1000, { price: '12.50' });
      expect(bought.invoice).toMatch(/^INV-2026-\d{6}$/);
      const invoice = (
        await call(h().app, 'GET', `/account/invoice/${bought.invoice_id}`, { token: parent.token })
      ).body.invoice;
      expect(invoice).toMatchObject({
        price: '12.50',
        vat: '0.69',
        total: '13.19',
        currency: 'CHF',
        vat_rate: '5.50',
      });
      await call(h().app, 'POST', '/account/transfer', {
        token: parent.token,
        json: { transfer: { to_account: String(child.id), credits: 4 } },
      });
      const transferred = (await call(h().app, 'GET', '/account/invoice', { token: child.token })).body
        .invoices[0];
      expect(transferred).toMatchObject({ currency: 'CHF', total: '0.00', vat_rate: '5.50' });

      const pdf = await h().app.inject({
        method: 'GET',
        url: `/account/invoice/${bought.invoice_id}/download`,
        headers: { authorization: `Bearer ${parent.token}` },
      });
      const text = await pdfText(pdf.rawPayload);
      expect(text).toContain('Acme SMS SARL');
      expect(text).toContain('1 rue de la Paix');
      expect(text).toContain('13.19 CHF');
    });
  },
  {
    INVOICE_VAT_PERCENT: '5.5',
    INVOICE_CURRENCY: 'CHF',
    INVOICE_ISSUER: 'Acme SMS SARL | 1 rue de la Paix | 75002 Paris, France',
    INVOICE_PREFIX: 'INV',
  },
);
