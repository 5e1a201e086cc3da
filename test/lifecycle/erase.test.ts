// Erasing a phone number (GDPR): POST /erase for an account and its sub-accounts, `pigeon erase` for every
// account. The data is made through the real paths (sends, receipts, replies, clicks, lists, lookups, webhooks,
// alerts, invoices); the check reads every table the database catalog lists and looks for the number in
// every text value, so a table added later is checked too.
import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveringSimulator, testDeliveryWorker, testDispatcher } from '../helpers/worker.ts';

const erased = '33612345678';
const kept = '33698765432';
const quiet = { info() {}, warn() {}, error() {} };

interface Trace {
  table: string;
  column: string;
  row: Record<string, unknown>;
}

describeEachDialect(
  'erase a phone number',
  (h) => {
    const stops: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    });

    /** Every table of the catalog, read whole: each text value holding `needle`. */
    async function traces(needle: string): Promise<Trace[]> {
      const { db, dialect, schema } = h().deps.store;
      const tables =
        dialect === 'sqlite'
          ? await sql<{
              name: string;
            }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
          : await sql<{
              name: string;
            }>`select table_name as name from information_schema.tables where table_schema = ${schema ?? 'public'} and table_type = 'BASE TABLE'`.execute(
              db,
            );
      const found: Trace[] = [];
      for (const { name } of tables.rows) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
        for (const row of rows.rows) {
          for (const [column, value] of Object.entries(row)) {
            if (typeof value === 'string' && value.includes(needle)) found.push({ table: name, column, row });
          }
        }
      }
      return found;
    }

    const tablesOf = (found: Trace[]) => [...new Set(found.map((t) => t.table))].sort();

    async function send(account: TestAccount, to: { value: string; gsmsmsid: string }[]) {
      const r = await call(h().app, 'POST', '/send', {
        token: account.token,
        json: {
          sms: {
            message: { text: 'Your order: <-short->', links: ['https://example.com/orders'] },
            recipients: { gsm: to },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return Number(r.body.ticket);
    }

    async function settled(tickets: number[]) {
      await waitFor(async () => {
        const rows = await h()
          .deps.store.db.selectFrom('messages')
          .select('state')
          .where('campaign_id', 'in', tickets)
          .execute();
        return rows.every((m) => m.state === 'delivered');
      }, 'every message delivered');
    }

    /**
     * Account A (with a sub-account whose profile phone is the number) and account B both write to the
     * number and to another one; A's webhooks receive the events.
     */
    async function world() {
      const worker = testDeliveryWorker(h(), deliveringSimulator(), {}, quiet);
      await worker.start();
      stops.push(() => worker.stop());
      const receiver = await new WebhookReceiver().listen();
      stops.push(() => receiver.close());

      const a = await h().account({ credits: 1000 });
      const b = await h().account({ credits: 1000 });
      const sub = await call(h().app, 'POST', '/account', {
        token: a.token,
        json: {
          account: { email: `sub-${a.id}@example.com`, password: 'long enough pw', phone: `+${erased}` },
        },
      });
      expect(sub.body.status, sub.body.details).toBe(1);
      const subId = Number(sub.body.id);
      await h().deps.services.invoices.purchase(subId, 10, { price: '1.00' });
      for (const type of ['DLR', 'MO', 'STOP']) {
        const hook = await call(h().app, 'POST', '/webhook', {
          token: a.token,
          json: { webhook: { type, url: `http://127.0.0.1:${receiver.port}/${type}` } },
        });
        expect(hook.body.status, hook.body.details).toBe(1);
      }
      const notification = await call(h().app, 'PUT', '/notification/balance', {
        token: a.token,
        json: {
          notification: {
            alert_trigger: '100000',
            alert_email: '0',
            alert_gsm: '1',
            email: '',
            phone_number: erased,
          },
        },
      });
      expect(notification.body.status, notification.body.details).toBe(1);

      // B writes to the number first, so the replies below go to A, which wrote last.
      const bTicket = await send(b, [{ value: erased, gsmsmsid: 'b-erased' }]);
      const aTicket = await send(a, [
        { value: erased, gsmsmsid: 'a-erased' },
        { value: kept, gsmsmsid: 'a-kept' },
      ]);
      await settled([aTicket, bTicket]);

      const { replies, links, clickFold } = h().deps.services;
      await replies.recordInbound({ from: `+${erased}`, to: 'PIGEON', text: 'Hello, who is this?' });
      await replies.recordInbound({ from: erased, to: 'PIGEON', text: 'STOP' });
      await replies.recordInbound({ from: kept, to: 'PIGEON', text: 'Thanks' });
      // The first half of a reply whose second half has not come yet: it belongs to no account so far.
      await replies.recordInbound({
        from: erased,
        to: 'PIGEON',
        text: 'Half a ',
        part: { ref: 9, total: 2, seq: 1 },
      });

      // The number's short link is clicked, and the fold counts it.
      const [toErased] = await h()
        .deps.store.db.selectFrom('messages')
        .select('text')
        .where('campaign_id', '=', aTicket)
        .where('recipient', '=', erased)
        .execute();
      const code = toErased.text.split('/').pop()!;
      const target = await links.resolve(code);
      expect(target).toBeDefined();
      const visit = {
        head: false,
        headers: { 'user-agent': 'Mozilla/5.0 (iPhone)' },
        address: '198.51.100.7',
      };
      expect(await links.recordVisit(target!, visit)).toBe('counted');
      await clickFold.foldClicks(100);

      for (const [list, value] of [
        [
          '/list',
          {
            list: {
              name: 'customers',
              contacts: { gsm: [{ value: erased, info1: 'Ann' }, { value: kept }] },
            },
          },
        ],
        ['/npai', { npai: { contacts: { gsm: [{ value: erased }] } } }],
        ['/lookup', { lookup: { to: [erased, kept] } }],
      ] as const) {
        const r = await call(h().app, 'POST', list, { token: a.token, json: value });
        expect(r.body.status, r.body.details).toBe(1);
      }
      const bLookup = await call(h().app, 'POST', '/lookup', {
        token: b.token,
        json: { lookup: { to: [erased] } },
      });
      expect(bLookup.body.status).toBe(1);

      // A's webhooks hear the DLR, MO and STOP events.
      const dispatcher = testDispatcher(h(), quiet);
      dispatcher.start();
      await waitFor(
        async () =>
          (
            await h()
              .deps.store.db.selectFrom('webhook_deliveries')
              .select('id')
              .where('state', '!=', 'delivered')
              .execute()
          ).length === 0 && receiver.requests.length >= 5,
        'the webhooks delivered',
      );
      await dispatcher.stop();
      return { a, b, subId, aTicket, bTicket };
    }

    it('POST /erase takes the number out of every table for the account and its sub-accounts, reports what it removed, and leaves other numbers and other accounts alone', async () => {
      const { a, b, subId, aTicket } = await world();
      const before = await traces(erased);
      // The number is where the real paths put it: the test covers these tables.
      expect(tablesOf(before)).toEqual(
        expect.arrayContaining([
          'accounts',
          'alert_jobs',
          'balance_notifications',
          'blacklist',
          'contacts',
          'events',
          'invoices',
          'lookups',
          'messages',
          'mo_fragments',
          'npai',
          'replies',
        ]),
      );
      const keptBefore = await traces(kept);
      const linkOfErased = await h()
        .deps.store.db.selectFrom('links')
        .select(['id', 'gsmsmsid', 'clicks'])
        .where('campaign_id', '=', aTicket)
        .orderBy('message_seq')
        .execute();
      expect(linkOfErased.map((l) => [l.gsmsmsid, l.clicks])).toEqual([
        ['a-erased', 1],
        ['a-kept', 0],
      ]);

      const r = await call(h().app, 'POST', '/erase', {
        token: a.token,
        json: { erase: { number: '+33 6 12 34 56 78' } },
      });
      expect(r.body).toEqual({
        status: 1,
        message: 'OK',
        number: erased,
        accounts: [String(a.id), String(subId)],
        removed: {
          messages: 1,
          replies: 2,
          mo_fragments: 0,
          links: 1,
          clicks: 1,
          contacts: 1,
          blacklist: 1,
          npai: 1,
          lookups: 1,
          events: 3,
          webhook_deliveries: 3,
          webhook_attempts: 3,
          alert_jobs: 1,
          balance_notifications: 1,
          accounts: 1,
          invoices: 1,
          smpp_outbox: 0,
        },
      });

      // What is left of the number is B's (another tenant) and the half reply no account owns yet.
      const after = await traces(erased);
      const mine = new Set([a.id, subId]);
      for (const trace of after) {
        const owner = trace.row.account_id === undefined ? undefined : Number(trace.row.account_id);
        expect(
          trace.table === 'mo_fragments' || owner === b.id,
          `${trace.table}.${trace.column} still holds the number`,
        ).toBe(true);
        expect(owner === undefined || !mine.has(owner)).toBe(true);
      }
      expect(tablesOf(after)).toEqual(['events', 'lookups', 'messages', 'mo_fragments']);
      // The other number lost nothing.
      expect((await traces(kept)).length).toBe(keptBefore.length);

      // A's message keeps its row for billing and counters, without the person; its link forgets them.
      const campaign = await call(h().app, 'GET', `/campaign/${aTicket}`, { token: a.token });
      expect(campaign.body.campaign[0]).toMatchObject({ total: 2, delivered: 2, cost: 2, clicks: 1 });
      const rows = await h()
        .deps.store.db.selectFrom('messages')
        .select(['recipient', 'text', 'gsmsmsid', 'parts', 'state'])
        .where('campaign_id', '=', aTicket)
        .orderBy('seq')
        .execute();
      expect(rows[0]).toEqual({
        recipient: 'erased',
        text: '',
        gsmsmsid: null,
        parts: 1,
        state: 'delivered',
      });
      expect(rows[1]).toMatchObject({ recipient: kept, gsmsmsid: 'a-kept' });
      const links = await h()
        .deps.store.db.selectFrom('links')
        .select(['gsmsmsid', 'clicks'])
        .where('campaign_id', '=', aTicket)
        .orderBy('message_seq')
        .execute();
      expect(links).toEqual([
        { gsmsmsid: null, clicks: 1 },
        { gsmsmsid: 'a-kept', clicks: 0 },
      ]);

      // Erasing again finds nothing; B's erasure reaches B's rows only.
      const again = await call(h().app, 'POST', '/erase', {
        token: a.token,
        json: { erase: { number: erased } },
      });
      expect(Object.values(again.body.removed).every((n) => n === 0)).toBe(true);
      const byB = await call(h().app, 'POST', '/erase', {
        token: b.token,
        json: { erase: { number: erased } },
      });
      expect(byB.body).toMatchObject({
        accounts: [String(b.id)],
        removed: { messages: 1, lookups: 1, events: 1 },
      });
      expect(tablesOf(await traces(erased))).toEqual(['mo_fragments']);
    });

    it('bad input answers -7 with details, no token -1, and nothing is erased', async () => {
      const a = await h().account();
      const cases: [unknown, RegExp][] = [
        [{ erase: {} }, /erase.number is required/],
        [{ erase: { number: '' } }, /erase.number is required/],
        [{ erase: { number: 'call me' } }, /erase.number "call me" must be a phone number/],
        [{ erase: { number: '0612345678' } }, /must be a phone number/],
        [{ erase: { number: { toString: 1 } } }, /erase.number .* must be a phone number/],
        [{ erase: { number: 1e300 } }, /must be a phone number/],
        [{ nothing: 1 }, /erase/],
      ];
      for (const [json, details] of cases) {
        const r = await call(h().app, 'POST', '/erase', { token: a.token, json });
        expect(r.httpCode).toBe(200);
        expect(r.body.status, JSON.stringify(json)).toBe(-7);
        expect(r.body.details).toMatch(details);
      }
      const xml = await call(h().app, 'POST', '/erase', {
        token: a.token,
        xml: `<erase><number>${kept}</number></erase>`,
        accept: 'application/xml',
      });
      expect(xml.body).toMatchObject({ status: '1', number: kept, removed: { messages: '0' } });
      const anonymous = await call(h().app, 'POST', '/erase', { json: { erase: { number: erased } } });
      expect(anonymous.body.status).toBe(-1);
    });

    it('`pigeon erase NUMBER` takes the number out of every table of every account; --account limits it; bad input exits non-zero', async () => {
      // Whatever the tests before left, and a world of its own.
      const { b } = await world();
      expect((await traces(erased)).length).toBeGreaterThan(0);
      const keptBefore = await traces(kept);

      const bad = await pigeonOn(h().databaseUrl, 'erase', 'nobody');
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/NUMBER "nobody" must be a phone number/);
      const unknown = await pigeonOn(h().databaseUrl, 'erase', erased, '--account', '999999');
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toMatch(/account 999999 does not exist/);

      const onlyB = await pigeonOn(h().databaseUrl, 'erase', erased, '--account', String(b.id));
      expect(onlyB.code, onlyB.stderr).toBe(0);
      expect(JSON.parse(onlyB.stdout)).toMatchObject({
        number: erased,
        accounts: [String(b.id)],
        removed: { messages: 1, lookups: 1, events: 1, replies: 0, mo_fragments: 0 },
      });
      expect((await traces(erased)).some((t) => Number(t.row.account_id) === b.id)).toBe(false);

      const r = await pigeonOn(h().databaseUrl, 'erase', `00${erased}`);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report).toMatchObject({ number: erased, accounts: 'all' });
      // What B had went with --account; the rest is A's (and the half reply, which only this erasure takes).
      expect(report.removed).toEqual({
        messages: 1,
        replies: 2,
        mo_fragments: 1,
        links: 1,
        clicks: 1,
        contacts: 1,
        blacklist: 1,
        npai: 1,
        lookups: 1,
        events: 3,
        webhook_deliveries: 3,
        webhook_attempts: 3,
        alert_jobs: 1,
        balance_notifications: 1,
        accounts: 1,
        invoices: 1,
        smpp_outbox: 0,
      });
      expect(await traces(erased)).toEqual([]);
      expect((await traces(kept)).length).toBe(keptBefore.length);
    }, 120_000);

    it('SQLite: once POST /erase answers, the number is in no byte of the database file or its WAL', async (ctx) => {
      if (h().dialect !== 'sqlite') ctx.skip();
      const { a, b } = await world();
      const file = h().databaseUrl;
      const occurrences = (needle: string) =>
        [file, `${file}-wal`].map((path) => {
          const bytes = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
          let count = 0;
          for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) count++;
          return count;
        });
      const [inFile, inLog] = occurrences(erased);
      expect(inFile + inLog).toBeGreaterThan(0);

      for (const account of [a, b]) {
        const r = await call(h().app, 'POST', '/erase', {
          token: account.token,
          json: { erase: { number: erased } },
        });
        expect(r.body.status, r.body.details).toBe(1);
      }
      // The half reply no account owns yet: only the operator's erasure of every account takes it.
      await h().deps.services.erase.eraseForOperator(erased);
      expect(await traces(erased)).toEqual([]);
      expect(occurrences(erased)).toEqual([0, 0]);
      // Read the same way, the other number is still there: the search does find what is stored.
      const [keptInFile, keptInLog] = occurrences(kept);
      expect(keptInFile + keptInLog).toBeGreaterThan(0);
    }, 60_000);
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);
