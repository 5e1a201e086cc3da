// GET /messages and GET /messages/mo: the account's messages and replies over a period (the last 24 hours by
// default, at most 31 days), in SMSFactor's fields, filtered, sorted and paged; a calling code several
// countries share; what another account or a parent never sees; JSON and XML; SQLite and PostgreSQL.
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { zonedTime } from '../../src/shared/zoned-time.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';
import { asXmlWouldSay } from '../helpers/xml.ts';

const { wallTime } = zonedTime('Europe/Paris');
const hourMs = 3_600_000;

/**
 * French mobile numbers of this file, each used once: replies go to the last campaign that wrote to a number.
 * They end in 5, never in the simulator's 0000, 0001 or 0002 (NPAI, rejected, expired).
 */
let nextNumber = 0;
const fresh = () => `3365${String(6_000_005 + 10 * ++nextNumber)}`;
const belgian = () => `32470${String(100_005 + 10 * ++nextNumber)}`;
/** Réunion and Mayotte share the calling code 262; their numbers tell them apart. */
const reunion = (n: number) => `262692${String(100_000 + n)}`;
const mayotte = (n: number) => `2626390${String(10_000 + n)}`;

interface Recipient {
  value: string;
  gsmsmsid?: string;
}

async function send(
  h: Harness,
  a: TestAccount,
  recipients: (string | Recipient)[],
  message: { text?: string; sender?: string; delay?: string } = {},
): Promise<string> {
  const r = await call(h.app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: {
        message: {
          text: message.text ?? 'Bonjour',
          pushtype: 'alert',
          sender: message.sender,
          delay: message.delay,
        },
        recipients: { gsm: recipients.map((r) => (typeof r === 'string' ? { value: r } : r)) },
      },
    },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.ticket;
}

const get = (h: Harness, a: TestAccount, url: string, accept?: string) =>
  call(h.app, 'GET', url, { token: a.token, accept });

/** The ids of a campaign's messages by recipient. */
async function messageIds(h: Harness, ticket: string): Promise<Record<string, string>> {
  const rows = await h.deps.store.db
    .selectFrom('messages')
    .select(['id', 'recipient'])
    .where('campaign_id', '=', Number(ticket))
    .execute();
  return Object.fromEntries(rows.map((r) => [r.recipient, String(r.id)]));
}

const setOutcome = (h: Harness, ticket: string, recipient: string, state: string, dlrStatus: number) =>
  h.deps.store.db
    .updateTable('messages')
    .set({ state, dlr_status: dlrStatus })
    .where('campaign_id', '=', Number(ticket))
    .where('recipient', '=', recipient)
    .execute();

const q = (value: string) => encodeURIComponent(value);

describeEachDialect('message history', (h) => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });

  it("GET /messages answers the last 24 hours' messages in SMSFactor's fields, newest first", async () => {
    const a = await h().account();
    const delivered = fresh();
    // The simulator answers a number ending in 0000 with an unknown subscriber (NPAI).
    const npai = `3365${String(700 + ++nextNumber)}0000`;
    const sentAt = h().clock.now();
    const first = await send(h(), a, [{ value: delivered, gsmsmsid: 'order-1' }, npai], {
      text: 'Votre code 1234',
      sender: 'Shop',
    });
    const worker = testDeliveryWorker(h(), deliveringSimulator());
    await worker.start();
    await waitFor(async () => {
      const rows = await h()
        .deps.store.db.selectFrom('messages')
        .select('state')
        .where('campaign_id', '=', Number(first))
        .execute();
      return rows.every((m) => m.state === 'delivered' || m.state === 'failed');
    }, 'final states');
    await worker.stop();
    h().clock.advance(60_000);
    const be = belgian();
    const second = await send(h(), a, [be], { text: 'Hallo' });
    const ids = { ...(await messageIds(h(), first)), ...(await messageIds(h(), second)) };

    const r = await get(h(), a, '/messages');
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      messages: [
        {
          id: ids[be],
          campaign_id: second,
          destination: be,
          gsmsmsid: '',
          text: 'Hallo',
          sender: '',
          status: 1,
          date: wallTime(sentAt + 60_000),
          delivery_date: '',
          country_code: 'BE',
          cost: 1,
          route: '',
          connector: '',
        },
        {
          id: ids[npai],
          campaign_id: first,
          destination: npai,
          gsmsmsid: '',
          text: 'Votre code 1234',
          sender: 'Shop',
          status: 5,
          date: wallTime(sentAt),
          delivery_date: wallTime(sentAt),
          country_code: 'FR',
          cost: 1,
          route: '',
          connector: '',
        },
        {
          id: ids[delivered],
          campaign_id: first,
          destination: delivered,
          gsmsmsid: 'order-1',
          text: 'Votre code 1234',
          sender: 'Shop',
          status: 3,
          date: wallTime(sentAt),
          delivery_date: wallTime(sentAt),
          country_code: 'FR',
          cost: 1,
          route: '',
          connector: '',
        },
      ],
      totalRecords: 3,
      totalDisplayRecords: 3,
    });
    const paged = await get(h(), a, '/messages?sort=date&start=1&length=1');
    expect(paged.body).toMatchObject({
      totalRecords: 3,
      totalDisplayRecords: 3,
      messages: [{ id: ids[npai] }],
    });
  });

  it('GET /messages filters by number, text, DLR code and country, and sorts by id, date, destination and status', async () => {
    const a = await h().account();
    const [fr1, fr2, fr3, be1] = [fresh(), fresh(), fresh(), belgian()];
    const now = h().clock.now();
    const promo = await send(h(), a, [fr1, fr2], { text: 'Promo été -20%', sender: 'Shop' });
    const reminder = await send(h(), a, [be1], { text: 'Rappel RDV' });
    const later = await send(h(), a, [fr3], { text: 'Plus tard', delay: wallTime(now + hourMs) });
    expect((await call(h().app, 'DELETE', `/send/${later}`, { token: a.token })).body.status).toBe(1);
    await setOutcome(h(), promo, fr1, 'delivered', 3);
    const ids = {
      ...(await messageIds(h(), promo)),
      ...(await messageIds(h(), reminder)),
      ...(await messageIds(h(), later)),
    };
    // The cancelled campaign is due in an hour: a period that covers it.
    const period = `date_start=${q(wallTime(now - hourMs))}&date_end=${q(wallTime(now + 2 * hourMs))}`;
    const found = async (query: string) => {
      const r = await get(h(), a, `/messages?${period}&${query}`);
      expect(r.body.status, `${query}: ${r.body.details}`).toBe(1);
      expect(r.body.totalRecords, query).toBe(4);
      expect(r.body.totalDisplayRecords, query).toBe(r.body.messages.length);
      return r.body.messages.map((m: { destination: string }) => m.destination);
    };
    expect(await found('sort=id')).toEqual([fr1, fr2, be1, fr3]);
    expect(await found('sort=-id')).toEqual([fr3, be1, fr2, fr1]);
    expect(await found('sort=-date')).toEqual([fr3, be1, fr2, fr1]);
    expect(await found('sort=destination')).toEqual([be1, fr1, fr2, fr3]);
    expect(await found('sort=status')).toEqual([fr3, fr2, be1, fr1]);
    expect(await found('sort=-status')).toEqual([fr1, be1, fr2, fr3]);

    expect(await found(`destination=${fr1}`)).toEqual([fr1]);
    expect(await found(`destination=${q(`+${fr1.slice(0, 2)} ${fr1.slice(2)}`)}`)).toEqual([fr1]);
    expect(await found(`destination=00${be1}`)).toEqual([be1]);
    expect(await found('message=PROMO')).toEqual([fr2, fr1]);
    expect(await found(`message=${q('-20%')}`)).toEqual([fr2, fr1]);
    expect(await found(`message=${q('%')}`)).toEqual([fr2, fr1]);
    expect(await found('message=rappel')).toEqual([be1]);
    // DLR codes: 3 delivered, 1 sent without a receipt yet (queued here), 0 never sent (cancelled).
    expect(await found('status=3')).toEqual([fr1]);
    expect(await found('status=1&sort=id')).toEqual([fr2, be1]);
    expect(await found('status=0')).toEqual([fr3]);
    expect(await found('status=5')).toEqual([]);
    expect(await found('country=FR&sort=id')).toEqual([fr1, fr2, fr3]);
    expect(await found('country=be')).toEqual([be1]);
    expect(await found('country=US')).toEqual([]);
    expect(await found('country=FR&status=1&message=promo')).toEqual([fr2]);
    const one = await get(h(), a, `/messages?${period}&status=0`);
    // Its campaign was cancelled and refunded: it reads back at cost 0, as the campaign does.
    expect(one.body.messages[0]).toMatchObject({ id: ids[fr3], status: 0, delivery_date: '', cost: 0 });

    const long = 'x'.repeat(161);
    for (const [query, details] of [
      ['status=8', /^status "8" must be a DLR code: 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 12$/],
      ['status=delivered', /^status "delivered" must be a DLR code/],
      ['country=XX', /^country "XX" must be an ISO 3166-1 alpha-2 country code \(e\.g\. FR\)$/],
      ['country=FRA', /^country "FRA" must be an ISO 3166-1 alpha-2/],
      ['destination=abc', /^destination "abc" must be a phone number in international format/],
      [`message=${long}`, /^message is 161 characters long; a message filter holds at most 160$/],
      ['sort=sender', /^sort "sender" must be one of id, date, destination, status, with a leading -/],
      ['sort=text', /^sort "text" must be one of id, date, destination, status/],
      ['length=1001', /^length "1001" must be a whole number from 1 to 1000$/],
      ['start=-1', /^start "-1" must be a whole number ≥ 0$/],
    ] as const) {
      const r = await get(h(), a, `/messages?${period}&${query}`);
      expect(r.body, query).toMatchObject({ status: -7, message: 'Data error' });
      expect(r.body.details, query).toMatch(details);
    }
  });

  it('a period is the last 24 hours by default, 24 hours from or to a single date, and at most 31 days', async () => {
    const a = await h().account();
    const [older, newer, scheduled] = [fresh(), fresh(), fresh()];
    const t0 = h().clock.now();
    await send(h(), a, [older]);
    h().clock.advance(25 * hourMs);
    await send(h(), a, [newer]);
    await send(h(), a, [scheduled], { delay: wallTime(t0 + 72 * hourMs) });
    const found = async (query = '') => {
      const r = await get(h(), a, `/messages${query}`);
      expect(r.body.status, `${query}: ${r.body.details}`).toBe(1);
      return {
        numbers: r.body.messages.map((m: { destination: string }) => m.destination),
        total: r.body.totalRecords,
      };
    };
    expect(await found()).toEqual({ numbers: [newer], total: 1 });
    expect(await found(`?date_start=${q(wallTime(t0))}`)).toEqual({ numbers: [older], total: 1 });
    expect(await found(`?date_end=${q(wallTime(t0 + 25 * hourMs))}`)).toEqual({ numbers: [newer], total: 1 });
    // date_end is inclusive to the second; date_start to the millisecond the message was due.
    expect(await found(`?date_start=${q(wallTime(t0))}&date_end=${q(wallTime(t0 + 72 * hourMs))}`)).toEqual({
      numbers: [scheduled, newer, older],
      total: 3,
    });
    expect(
      await found(
        `?date_start=${q(wallTime(t0 + 1000))}&date_end=${q(wallTime(t0 + 31 * 24 * hourMs + 1000))}`,
      ),
    ).toEqual({
      numbers: [scheduled, newer],
      total: 2,
    });
    for (const [query, details] of [
      [
        `?date_start=${q(wallTime(t0))}&date_end=${q(wallTime(t0 + 31 * 24 * hourMs + 1000))}`,
        /are more than 31 days apart; a history read covers at most 31 days$/,
      ],
      [
        `?date_start=${q(wallTime(t0 + hourMs))}&date_end=${q(wallTime(t0))}`,
        /^date_start ".+" is after date_end ".+"$/,
      ],
      [
        '?date_start=2026-13-01%2000:00:00',
        /^date_start "2026-13-01 00:00:00" must be a date as Y-m-d H:i:s/,
      ],
      ['?date_end=2026-01-05T10:00:00', /^date_end "2026-01-05T10:00:00" must be a date as Y-m-d H:i:s/],
    ] as const) {
      for (const path of ['/messages', '/messages/mo']) {
        const r = await get(h(), a, `${path}${query}`);
        expect(r.body, `${path}${query}`).toMatchObject({ status: -7 });
        expect(r.body.details).toMatch(details);
      }
    }
  });

  it('a country sharing its calling code is told apart number by number, and such a read is bounded', async () => {
    const a = await h().account();
    const numbers = [reunion(1), mayotte(1), reunion(2), fresh(), mayotte(2), reunion(3)];
    await send(h(), a, numbers);
    const found = async (query: string) => {
      const r = await get(h(), a, `/messages?${query}`);
      expect(r.body.status, `${query}: ${r.body.details}`).toBe(1);
      return {
        numbers: r.body.messages.map((m: { destination: string }) => m.destination),
        countries: [...new Set(r.body.messages.map((m: { country_code: string }) => m.country_code))],
        shown: r.body.totalDisplayRecords,
      };
    };
    expect(await found('country=RE&sort=id')).toEqual({
      numbers: [reunion(1), reunion(2), reunion(3)],
      countries: ['RE'],
      shown: 3,
    });
    expect(await found('country=yt&sort=-id')).toEqual({
      numbers: [mayotte(2), mayotte(1)],
      countries: ['YT'],
      shown: 2,
    });
    expect(await found('country=RE&sort=id&start=1&length=1')).toEqual({
      numbers: [reunion(2)],
      countries: ['RE'],
      shown: 3,
    });
    expect(await found(`country=RE&destination=${mayotte(1)}`)).toEqual({
      numbers: [],
      countries: [],
      shown: 0,
    });
    expect(await found('country=FR')).toEqual({ numbers: [numbers[3]], countries: ['FR'], shown: 1 });

    // More than 10,000 messages of that calling code in the period: narrowed, or refused with the reason.
    const big = await h().account({ credits: 20_000 });
    await send(
      h(),
      big,
      Array.from({ length: 10_001 }, (_, i) => reunion(1000 + i)),
    );
    const refused = await get(h(), big, '/messages?country=YT');
    expect(refused.body).toMatchObject({ status: -7 });
    expect(refused.body.details).toMatch(
      /^country "YT" shares its calling code 262 with RE, so each number is read to tell them apart, at most 10000 in one request; this period has more: narrow it/,
    );
    expect((await get(h(), big, `/messages?country=RE&destination=${reunion(1000)}`)).body).toMatchObject({
      status: 1,
      totalRecords: 10_001,
      totalDisplayRecords: 1,
    });
    expect((await get(h(), big, '/messages?country=FR&length=1')).body).toMatchObject({
      status: 1,
      totalDisplayRecords: 0,
      messages: [],
    });
  });

  it("GET /messages/mo answers the period's replies, MO and STOP, newest first, with their campaign", async () => {
    const a = await h().account();
    const [x, y] = [fresh(), fresh()];
    const ticket = await send(h(), a, [x, y]);
    const replies = h().deps.services.replies;
    const t0 = h().clock.now();
    await replies.recordInbound({ from: x, to: 'pigeon', text: 'Oui' });
    h().clock.advance(60_000);
    await replies.recordInbound({ from: `+${y}`, to: 'pigeon', text: 'STOP' });
    h().clock.advance(60_000);
    await replies.recordInbound({ from: x, to: 'pigeon', text: 'Merci' });
    const replyIds = (
      await h()
        .deps.store.db.selectFrom('replies')
        .select('id')
        .where('campaign_id', '=', Number(ticket))
        .orderBy('id')
        .execute()
    ).map((r) => String(r.id));

    const r = await get(h(), a, '/messages/mo');
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      replies: [
        {
          id: replyIds[2],
          destination: x,
          message: 'Merci',
          date: wallTime(t0 + 120_000),
          campaign_id: ticket,
        },
        {
          id: replyIds[1],
          destination: y,
          message: 'STOP',
          date: wallTime(t0 + 60_000),
          campaign_id: ticket,
        },
        { id: replyIds[0], destination: x, message: 'Oui', date: wallTime(t0), campaign_id: ticket },
      ],
      totalRecords: 3,
      totalDisplayRecords: 3,
    });
    const messages = async (query: string) => {
      const r = await get(h(), a, `/messages/mo?${query}`);
      expect(r.body.status, `${query}: ${r.body.details}`).toBe(1);
      return r.body.replies.map((m: { message: string }) => m.message);
    };
    expect(await messages('sort=date')).toEqual(['Oui', 'STOP', 'Merci']);
    expect(await messages('sort=-id')).toEqual(['Merci', 'STOP', 'Oui']);
    expect(await messages('sort=text')).toEqual(['Merci', 'Oui', 'STOP']);
    expect(await messages('sort=date&start=1&length=1')).toEqual(['STOP']);
    expect(await messages(`date_start=${q(wallTime(t0 + 60_000))}&sort=date`)).toEqual(['STOP', 'Merci']);
    expect(await messages(`date_end=${q(wallTime(t0))}`)).toEqual(['Oui']);
    // A day later they are out of the default period.
    h().clock.advance(25 * hourMs);
    expect((await get(h(), a, '/messages/mo')).body).toMatchObject({ replies: [], totalRecords: 0 });
    for (const [query, details] of [
      ['sort=destination', /^sort "destination" must be one of id, date, text, with a leading -/],
      ['length=0', /^length "0" must be a whole number from 1 to 1000$/],
    ] as const) {
      const bad = await get(h(), a, `/messages/mo?${query}`);
      expect(bad.body, query).toMatchObject({ status: -7, details: expect.stringMatching(details) });
    }
  });

  it("another account's and a sub-account's messages and replies never show in the caller's history", async () => {
    const parent = await h().account();
    const child = await h().account({ parentId: parent.id });
    const other = await h().account();
    const [ours, theirs, childs] = [fresh(), fresh(), fresh()];
    const shared = fresh();
    await send(h(), parent, [ours, shared], { text: 'from the parent' });
    await send(h(), other, [theirs, shared], { text: 'from another' });
    // The last to write to the shared number gets its replies.
    await send(h(), child, [childs, shared], { text: 'from the child' });
    const replies = h().deps.services.replies;
    for (const from of [ours, theirs, childs, shared])
      await replies.recordInbound({ from, to: 'x', text: 'Hi' });

    const numbers = async (a: TestAccount, query = '') =>
      (await get(h(), a, `/messages${query}`)).body.messages.map(
        (m: { destination: string }) => m.destination,
      );
    expect(await numbers(parent, '?sort=id')).toEqual([ours, shared]);
    expect(await numbers(parent, `?destination=${theirs}`)).toEqual([]);
    expect(await numbers(parent, '?message=from%20another')).toEqual([]);
    expect(await numbers(other, '?sort=id')).toEqual([theirs, shared]);
    expect(await numbers(child, '?sort=id')).toEqual([childs, shared]);
    const repliesOf = async (a: TestAccount) =>
      (await get(h(), a, '/messages/mo?sort=id')).body.replies.map(
        (r: { destination: string }) => r.destination,
      );
    expect(await repliesOf(parent)).toEqual([ours]);
    expect(await repliesOf(other)).toEqual([theirs]);
    expect(await repliesOf(child)).toEqual([childs, shared]);
    expect((await get(h(), parent, '/messages/mo')).body).toMatchObject({
      totalRecords: 1,
      totalDisplayRecords: 1,
    });
  });

  it('answers the same fields in JSON and XML', async () => {
    const a = await h().account();
    const [first, second] = [fresh(), belgian()];
    const ticket = await send(h(), a, [{ value: first, gsmsmsid: 'a&b' }, second], {
      text: 'Prix <5€> & plus',
      sender: 'Shop',
    });
    await setOutcome(h(), ticket, first, 'delivered', 3);
    const replies = h().deps.services.replies;
    for (const from of [first, second])
      await replies.recordInbound({ from, to: 'x', text: 'Oui <merci> & "bien"' });
    for (const url of ['/messages', '/messages/mo']) {
      const j = await get(h(), a, url, 'application/json');
      const x = await get(h(), a, url, 'application/xml');
      expect(j.body.status, j.body.details).toBe(1);
      expect(x.contentType).toContain('application/xml');
      expect(x.raw.startsWith('<?xml version="1.0" encoding="UTF-8"?><response>')).toBe(true);
      expect(Object.values(j.body).find(Array.isArray)).toHaveLength(2);
      expect(x.body).toEqual(asXmlWouldSay(j.body));
    }
    const bad = await get(h(), a, '/messages?status=99', 'application/xml');
    expect(bad.body).toMatchObject({ status: '-7', message: 'Data error' });
  });
});
