// GET /metrics/consumption: the credits (SMS parts) an account and its direct sub-accounts used over whole days
// in TIMEZONE, per country, from what the SMSC accepted; filters by country and sub-account; what is never
// counted (cancelled, queued, refused, expired before a submit); whose ids a caller may name; JSON and XML;
// SQLite and PostgreSQL. Messages go through the delivery worker and the simulator, on the harness's clock.
import { XMLParser } from 'fast-xml-parser';
import type { Kysely } from 'kysely';
import { DateTime } from 'luxon';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import type { OutboundPart, SubmitOutcome, Transport } from '../../src/delivery/transport.ts';
import type { Store } from '../../src/store/db.ts';
import {
  availableDialects,
  call,
  createHarness,
  describeEachDialect,
  type Harness,
  type TestAccount,
} from '../helpers/harness.ts';
import { migrateThrough } from '../helpers/migrate-through.ts';
import { deliveringSimulator, testDeliveryWorker, untilFinal } from '../helpers/worker.ts';
import { asXmlWouldSay } from '../helpers/xml.ts';

/** Numbers of this file, each used once; none ends in the simulator's 0001 or 0002. */
let seq = 0;
const fr = () => `33656${String(100_005 + 10 * ++seq).padStart(6, '0')}`;
const be = () => `32470${String(100_005 + 10 * ++seq).padStart(6, '0')}`;
/** 44 is shared by GB, GG, IM and JE: the number tells which (this range is GB's). */
const gb = () => `447400${String(100_005 + 10 * ++seq).padStart(6, '0')}`;
/** The simulator answers a number ending in 0000 with an unknown subscriber: sent, then failed. */
const frNpai = () => `336${String(1000 + ++seq).padStart(4, '0')}0000`;

const onePart = 'Bonjour';
const twoParts = 'a'.repeat(200);
const threeParts = 'b'.repeat(400);

/** An instant from a wall time in Paris (the default TIMEZONE). */
const paris = (wall: string) => DateTime.fromSQL(wall, { zone: 'Europe/Paris' }).toMillis();

/** A carrier that refuses some numbers for good at submit and lets the simulator take the others. */
class RefusingTransport implements Transport {
  readonly name = 'refusing';
  readonly capacity: number;
  constructor(
    private readonly inner: Transport,
    private readonly refused: Set<string>,
  ) {
    this.capacity = inner.capacity;
  }
  start: Transport['start'] = (handler) => this.inner.start(handler);
  ready = () => this.inner.ready();
  stop = () => this.inner.stop();
  async submit(part: OutboundPart): Promise<SubmitOutcome> {
    if (this.refused.has(part.destination))
      return { ok: false, retry: false, dlrStatus: 9, error: 'rejected by the test carrier' };
    return this.inner.submit(part);
  }
}

async function send(
  h: Harness,
  a: TestAccount,
  numbers: string[],
  text = onePart,
  delay?: string,
): Promise<{ ticket: string; cost: number }> {
  const r = await call(h.app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: {
        message: { text, pushtype: 'alert', delay },
        recipients: { gsm: numbers.map((value) => ({ value })) },
      },
    },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return { ticket: r.body.ticket, cost: r.body.cost };
}

async function account(h: Harness, company: string, parent?: TestAccount): Promise<TestAccount> {
  const created = await h.deps.services.accounts.createAccount({
    email: `conso-${++seq}-${Date.now()}@example.com`,
    password: 'correct horse battery',
    credits: 1000,
    parentId: parent?.id,
    company,
  });
  return { id: Number(created.account_id), token: created.token };
}

const consumption = (h: Harness, a: TestAccount, query = '', accept?: string) =>
  call(h.app, 'GET', `/metrics/consumption${query}`, { token: a.token, accept });

const xmlParser = new XMLParser({
  parseTagValue: false,
  ignoreDeclaration: true,
  isArray: (_name, jpath) => String(jpath) === 'response.data.by_sub_accounts',
});

describeEachDialect('consumption', (h) => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });

  /** Runs a worker until every message of the tickets has left the queue (submitted, final or refused). */
  async function deliver(
    tickets: string[],
    transport: Transport = deliveringSimulator(),
    validityMs?: number,
  ) {
    const worker = testDeliveryWorker(h(), transport, validityMs === undefined ? {} : { validityMs });
    workers.push(worker);
    await worker.start();
    await untilFinal(h(), tickets);
    await worker.stop();
    workers.splice(workers.indexOf(worker), 1);
  }

  /**
   * A parent with two sub-accounts, on 2026-01-05 (Paris): what each sent, and what none of them sent.
   *   parent: FR 1+1 parts, FR 1 part to a number that does not exist (sent, then failed), BE 2 parts = 5
   *   first:  FR 3 parts, GB 1 part = 4
   *   second: BE 1 part = 1
   * Not sent: a cancelled campaign, one still due later, one refused at submit, one expired before its submit.
   */
  let scenario:
    | Promise<{ parent: TestAccount; first: TestAccount; second: TestAccount; notSent: string[] }>
    | undefined;
  const built = () => {
    scenario ??= (async () => {
      h().clock.set(paris('2026-01-05 10:00:00'));
      const parent = await account(h(), 'Parent SAS');
      const first = await account(h(), 'First Ltd', parent);
      const second = await account(h(), 'Second BV', parent);
      const refusedNumber = fr();
      const tickets = [
        await send(h(), parent, [fr(), fr(), frNpai()]),
        await send(h(), parent, [be()], twoParts),
        await send(h(), first, [fr()], threeParts),
        await send(h(), first, [gb()]),
        await send(h(), second, [be()]),
        await send(h(), parent, [refusedNumber]),
      ];
      expect(tickets.map((t) => t.cost)).toEqual([3, 2, 3, 1, 1, 1]);
      await deliver(
        tickets.map((t) => t.ticket),
        new RefusingTransport(deliveringSimulator(), new Set([refusedNumber])),
      );
      const cancelled = await send(h(), parent, [fr(), be()], onePart, '2026-01-20 10:00:00');
      const cancel = await call(h().app, 'DELETE', `/send/${cancelled.ticket}`, { token: parent.token });
      expect(cancel.body.status, cancel.body.details).toBe(1);
      const later = await send(h(), first, [fr()], onePart, '2026-01-20 10:00:00');
      const expiring = await send(h(), second, [fr()], twoParts);
      await deliver([expiring.ticket], deliveringSimulator(), 0);
      return { parent, first, second, notSent: [cancelled.ticket, later.ticket, expiring.ticket] };
    })();
    return scenario;
  };

  it("counts the parts the SMSC accepted, per country, for the caller and each direct sub-account, in SMSFactor's shape", async () => {
    const { parent, first, second } = await built();
    const r = await consumption(h(), parent, '?date_start=2026-01-01&date_end=2026-01-31');
    expect(r.httpCode).toBe(200);
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      data: {
        total: 10,
        by_country: { FR: 6, BE: 3, GB: 1 },
        my_account: {
          account_id: parent.id,
          company: 'Parent SAS',
          conso: { total: 5, by_country: { FR: 3, BE: 2 } },
        },
        by_sub_accounts: [
          { account_id: first.id, company: 'First Ltd', conso: { total: 4, by_country: { FR: 3, GB: 1 } } },
          { account_id: second.id, company: 'Second BV', conso: { total: 1, by_country: { BE: 1 } } },
        ],
        date_start: '2026-01-01',
        date_end: '2026-01-31',
      },
    });
  });

  it('counts nothing for messages never sent: cancelled, still due, refused at submit, expired before a submit', async () => {
    const { parent, notSent } = await built();
    const states = await h()
      .deps.store.db.selectFrom('messages')
      .select(['state', 'sent_at', 'country'])
      .where(
        'campaign_id',
        'in',
        notSent.map((t) => Number(t)),
      )
      .orderBy('id')
      .execute();
    expect(states.map((m) => [m.state, m.sent_at, m.country])).toEqual([
      ['cancelled', null, null],
      ['cancelled', null, null],
      ['queued', null, null],
      ['expired', null, null],
    ]);
    const refused = await h()
      .deps.store.db.selectFrom('messages')
      .select(['state', 'sent_at'])
      .where('account_id', '=', parent.id)
      .where('state', '=', 'failed')
      .where('dlr_status', '=', 9)
      .execute();
    expect(refused).toEqual([{ state: 'failed', sent_at: null }]);
    // The whole of January and beyond: the totals of the first test, nothing more.
    const r = await consumption(h(), parent, '?date_start=2026-01-01&date_end=2026-12-31');
    expect(r.body.data.total).toBe(10);
  });

  it('country keeps only the listed countries (comma-separated, any case, or repeated), totals included', async () => {
    const { parent, first, second } = await built();
    const period = 'date_start=2026-01-05&date_end=2026-01-05';
    const r = await consumption(h(), parent, `?${period}&country=fr,%20GB`);
    expect(r.body.data).toMatchObject({
      total: 7,
      by_country: { FR: 6, GB: 1 },
      my_account: { conso: { total: 3, by_country: { FR: 3 } } },
      by_sub_accounts: [
        { account_id: first.id, conso: { total: 4, by_country: { FR: 3, GB: 1 } } },
        { account_id: second.id, conso: { total: 0, by_country: {} } },
      ],
    });
    const repeated = await consumption(h(), parent, `?${period}&country=BE&country=BE`);
    expect(repeated.body.data).toMatchObject({ total: 3, by_country: { BE: 3 } });
    const none = await consumption(h(), parent, `?${period}&country=DE`);
    expect(none.body.data).toMatchObject({ total: 0, by_country: {}, my_account: { conso: { total: 0 } } });
  });

  it("sub_account_id counts that direct sub-account alone; the caller's own line stays, at zero", async () => {
    const { parent, first } = await built();
    const r = await consumption(
      h(),
      parent,
      `?date_start=2026-01-01&date_end=2026-01-31&sub_account_id=${first.id}`,
    );
    expect(r.body.data).toEqual({
      total: 4,
      by_country: { FR: 3, GB: 1 },
      my_account: { account_id: parent.id, company: 'Parent SAS', conso: { total: 0, by_country: {} } },
      by_sub_accounts: [
        { account_id: first.id, company: 'First Ltd', conso: { total: 4, by_country: { FR: 3, GB: 1 } } },
      ],
      date_start: '2026-01-01',
      date_end: '2026-01-31',
    });
  });

  it('a sub-account sees only itself, and names no other account', async () => {
    const { first, second } = await built();
    const r = await consumption(h(), first, '?date_start=2026-01-01&date_end=2026-01-31');
    expect(r.body.data).toMatchObject({
      total: 4,
      my_account: { account_id: first.id, company: 'First Ltd', conso: { total: 4 } },
      by_sub_accounts: [],
    });
    const sibling = await consumption(h(), first, `?sub_account_id=${second.id}`);
    expect(sibling.body).toMatchObject({ status: -5 });
    expect(sibling.body.details).toContain(String(second.id));
  });

  it("answers -5 for another tenant's sub-account, the caller itself, its parent and ids that are no ids", async () => {
    const { parent, first } = await built();
    const other = await account(h(), 'Other');
    const otherChild = await account(h(), 'Other child', other);
    for (const [caller, id] of [
      [other, first.id],
      [parent, otherChild.id],
      [parent, parent.id],
      [first, parent.id],
      [parent, 999_999_999],
      [parent, 'abc'],
      [parent, '-1'],
    ] as const) {
      const r = await consumption(h(), caller, `?sub_account_id=${id}`);
      expect(r.httpCode).toBe(200);
      expect(r.body, `${caller.id} asking ${id}`).toMatchObject({
        status: -5,
        message: 'Resource not found',
      });
      expect(r.body.data).toBeUndefined();
    }
    // And the other tenant's own read counts nothing of the first tenant's.
    const mine = await consumption(h(), other, '?date_start=2026-01-01&date_end=2026-01-31');
    expect(mine.body.data).toMatchObject({
      total: 0,
      my_account: { account_id: other.id },
      by_sub_accounts: [{ account_id: otherChild.id, conso: { total: 0, by_country: {} } }],
    });
  });

  it('answers in XML when asked: repeated by_sub_accounts, countries as elements, every value as text', async () => {
    const { parent } = await built();
    const query = '?date_start=2026-01-01&date_end=2026-01-31';
    const json = await consumption(h(), parent, query);
    const r = await consumption(h(), parent, query, 'application/xml');
    expect(r.contentType).toContain('application/xml');
    expect(r.raw).toContain('<by_country><FR>6</FR><BE>3</BE><GB>1</GB></by_country>');
    const parsed = (xmlParser.parse(r.raw) as { response: unknown }).response;
    expect(parsed).toEqual(asXmlWouldSay(json.body));
  });

  it('counts a message on the day (in TIMEZONE) its submit was recorded, both ends of the period included', async () => {
    const a = await account(h(), 'Edges');
    const lastSecond = paris('2026-03-31 23:59:59');
    h().clock.set(lastSecond);
    const march = await send(h(), a, [fr()]);
    await deliver([march.ticket]);
    h().clock.set(lastSecond + 1000);
    const april = await send(h(), a, [be()], twoParts);
    await deliver([april.ticket]);
    const sentAt = await h()
      .deps.store.db.selectFrom('messages')
      .select(['sent_at', 'country'])
      .where('account_id', '=', a.id)
      .orderBy('id')
      .execute();
    expect(sentAt).toEqual([
      { sent_at: lastSecond, country: 'FR' },
      { sent_at: lastSecond + 1000, country: 'BE' },
    ]);
    const total = async (query: string) => (await consumption(h(), a, query)).body.data.total;
    expect(await total('?date_start=2026-03-31&date_end=2026-03-31')).toBe(1);
    expect(await total('?date_start=2026-04-01&date_end=2026-04-01')).toBe(2);
    expect(await total('?date_start=2026-03-01&date_end=2026-03-30')).toBe(0);
    expect(await total('?date_start=2026-04-02&date_end=2026-04-30')).toBe(0);
    expect(await total('?date_start=2026-03-31&date_end=2026-04-01')).toBe(3);
    // Without dates: the current month, to today (the clock is on April 1st, 00:00:00 in Paris).
    const current = await consumption(h(), a);
    expect(current.body.data).toMatchObject({ total: 2, date_start: '2026-04-01', date_end: '2026-04-01' });
    // date_end alone: from the first of its month; date_start alone: to today.
    expect((await consumption(h(), a, '?date_end=2026-03-31')).body.data).toMatchObject({
      total: 1,
      date_start: '2026-03-01',
      date_end: '2026-03-31',
    });
    expect((await consumption(h(), a, '?date_start=2026-03-15')).body.data).toMatchObject({
      total: 3,
      date_start: '2026-03-15',
      date_end: '2026-04-01',
    });
  });

  it('counts a number of no country (a non-geographic calling code) under ZZ, which country can select', async () => {
    const a = await account(h(), 'Satellite');
    h().clock.set(paris('2026-05-04 12:00:00'));
    const { ticket } = await send(h(), a, ['870773111632', fr()]);
    await deliver([ticket]);
    const day = 'date_start=2026-05-04&date_end=2026-05-04';
    expect((await consumption(h(), a, `?${day}`)).body.data).toMatchObject({
      total: 2,
      by_country: { FR: 1, ZZ: 1 },
    });
    expect((await consumption(h(), a, `?${day}&country=zz`)).body.data).toMatchObject({
      total: 1,
      by_country: { ZZ: 1 },
    });
  });

  it('answers -7 naming the field, the value and the rule for bad dates, periods and countries', async () => {
    const a = await account(h(), 'Bad input');
    h().clock.set(paris('2026-06-15 12:00:00'));
    const cases: [string, string][] = [
      ['?date_start=2026-1-5', 'date_start "2026-1-5" must be a date in the format Y-m-d'],
      ['?date_end=2026-02-30', 'date_end "2026-02-30" must be a date in the format Y-m-d'],
      [
        '?date_start=2026-01-05%2010:00:00',
        'date_start "2026-01-05 10:00:00" must be a date in the format Y-m-d',
      ],
      [
        '?date_start=2026-05-02&date_end=2026-05-01',
        'date_end "2026-05-01" is before date_start "2026-05-02"',
      ],
      ['?date_start=2025-01-01&date_end=2026-01-02', 'from 2025-01-01 to 2026-01-02 is 367 days long'],
      ['?date_start=2024-01-01', 'one read covers at most 366 days: give date_end'],
      ['?country=FRA', 'country "FRA" must be an ISO 3166-1 alpha-2 country code'],
      ['?country=FR,XX', 'country "XX" must be an ISO 3166-1 alpha-2 country code'],
      ['?country=FR,,1B', 'country "1B" must be an ISO 3166-1 alpha-2 country code'],
    ];
    for (const [query, details] of cases) {
      const r = await consumption(h(), a, query);
      expect(r.httpCode, query).toBe(200);
      expect(r.body, query).toMatchObject({ status: -7, message: 'Data error' });
      expect(r.body.details, query).toContain(details);
    }
    // 366 days, both ends included (a leap year), is the longest period.
    const year = await consumption(h(), a, '?date_start=2024-01-01&date_end=2024-12-31');
    expect(year.body).toMatchObject({ status: 1, data: { total: 0 } });
    const lastDay = await consumption(h(), a, '?date_start=2025-01-01&date_end=2026-01-01');
    expect(lastDay.body).toMatchObject({ status: 1, data: { total: 0 } });
  });

  it('answers -1 without a valid token', async () => {
    const r = await call(h().app, 'GET', '/metrics/consumption', { token: 'not-a-token' });
    expect(r.body).toMatchObject({ status: -1 });
  });
});

const dueAt = paris('2026-02-10 09:00:00');
const receiptAt = paris('2026-02-10 09:05:00');
const submittedAt = paris('2026-02-11 14:00:00');
/** Messages with an SMSC id, more than one page of the backfill (2,000). */
const oldSentCount = 2100;

/** One account's messages as the version before 017 stored them: sent ones, and ones never sent. */
async function seedBefore017(store: Store): Promise<void> {
  await migrateThrough(store, '016-invoices');
  // biome-ignore lint/suspicious/noExplicitAny: the schema of an older version.
  const db = store.db as Kysely<any>;
  await db
    .insertInto('accounts')
    .values({ email: 'old@example.com', password_hash: 'x', credits: 100, unlimited: 0, created_at: dueAt })
    .execute();
  await db
    .insertInto('campaigns')
    .values({
      account_id: 1,
      billed_account_id: 1,
      sender: 'Old',
      text: 'Hello',
      pushtype: 'alert',
      unicode: 0,
      cost: 0,
      total: 0,
      sent: 0,
      blacklisted: 0,
      duplicated: 0,
      invalid: 0,
      npai: 0,
      not_allowed: 0,
      status: 'scheduled',
      due_at: dueAt,
      created_at: dueAt,
    })
    .execute();
  const message = (seq: number, recipient: string, state: string, smscId: string | null, parts = 1) => ({
    campaign_id: 1,
    seq,
    account_id: 1,
    recipient,
    gsmsmsid: null,
    contact_id: null,
    text: 'Hello',
    parts,
    encoding: 'gsm7',
    state,
    due_at: dueAt,
    smsc_id: smscId,
    dlr_status: state === 'delivered' ? 3 : state === 'submitted' ? 1 : null,
    updated_at: state === 'submitted' ? submittedAt : receiptAt,
  });
  const rows = [
    message(0, '33656000015', 'submitted', 'a0', 2),
    message(1, '447911123456', 'delivered', 'a1'),
    message(2, '33656000025', 'failed', null),
    message(3, '33656000035', 'queued', null),
    message(4, '33656000045', 'cancelled', null),
  ];
  for (let i = 0; i < oldSentCount - 2; i++)
    rows.push(message(5 + i, `32470${100_000 + i}`, 'delivered', `b${i}`));
  for (let i = 0; i < rows.length; i += 300)
    await db
      .insertInto('messages')
      .values(rows.slice(i, i + 300))
      .execute();
}

for (const dialect of availableDialects()) {
  describe(`consumption of messages stored before migration 017 [${dialect}]`, () => {
    let h: Harness | undefined;
    beforeAll(async () => {
      h = await createHarness(dialect, {}, { beforeMigrations: seedBefore017 });
    });
    afterAll(async () => {
      await h?.close();
    });

    it('gets the country and send time of every message an SMSC accepted, a page at a time; others stay unsent', async () => {
      const rows = await h!.deps.store.db
        .selectFrom('messages')
        .select(['seq', 'sent_at', 'country'])
        .orderBy('seq')
        .execute();
      expect(rows.slice(0, 6)).toEqual([
        // Still submitted: its row was last written by the submit's record.
        { seq: 0, sent_at: submittedAt, country: 'FR' },
        // Final: the receipt wrote it last, so its due time stands for the submit.
        { seq: 1, sent_at: dueAt, country: 'GG' },
        { seq: 2, sent_at: null, country: null },
        { seq: 3, sent_at: null, country: null },
        { seq: 4, sent_at: null, country: null },
        { seq: 5, sent_at: dueAt, country: 'BE' },
      ]);
      expect(rows.filter((r) => r.sent_at !== null)).toHaveLength(oldSentCount);
      expect(rows[rows.length - 1]).toEqual({ seq: oldSentCount + 2, sent_at: dueAt, country: 'BE' });

      const token = (await h!.deps.services.tokens.createTokenForCli(1, 'test')).token;
      const r = await call(h!.app, 'GET', '/metrics/consumption?date_start=2026-02-01&date_end=2026-02-28', {
        token,
      });
      expect(r.body.data).toMatchObject({
        total: 2 + 1 + (oldSentCount - 2),
        by_country: { BE: oldSentCount - 2, FR: 2, GG: 1 },
      });
    });
  });
}
