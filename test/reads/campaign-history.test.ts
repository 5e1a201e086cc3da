// GET /campaigns' filters and sorts in SMSFactor's syntax, the lists a campaign was sent to (`lists:[{id}]`),
// the contact fields a list campaign's replies, STOPs and NPAI numbers tell, and what another account, or a
// parent, never sees; in JSON and XML, on SQLite and PostgreSQL.
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import {
  type CallResult,
  call,
  describeEachDialect,
  type Harness,
  type TestAccount,
} from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';
import { asXmlWouldSay } from '../helpers/xml.ts';

/**
 * French mobile numbers of this file: replies go to the last campaign that wrote to a number. They end in 5,
 * never in the simulator's 0000, 0001 or 0002 (NPAI, rejected, expired).
 */
const fr = (n: number) => `3365${String(5_000_005 + 10 * n)}`;
let nextNumber = 0;
const fresh = (count: number) => Array.from({ length: count }, () => fr(++nextNumber));

async function send(
  h: Harness,
  a: TestAccount,
  recipients: string[],
  message: { text?: string; delay?: string } = {},
): Promise<string> {
  const r = await call(h.app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: {
        message: { text: message.text ?? 'Bonjour', pushtype: 'alert', delay: message.delay },
        recipients: { gsm: recipients.map((value) => ({ value })) },
      },
    },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.ticket;
}

async function createList(h: Harness, a: TestAccount, gsm: Record<string, string>[]): Promise<string> {
  const r = await call(h.app, 'POST', '/list', {
    token: a.token,
    json: { list: { name: 'Clients', contacts: { gsm } } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.id;
}

async function sendLists(h: Harness, a: TestAccount, listIds: string[], simulate = false) {
  return call(h.app, 'POST', `/send/lists${simulate ? '/simulate' : ''}`, {
    token: a.token,
    json: {
      sms: {
        message: { text: 'Bonjour [info1]', pushtype: 'alert' },
        lists: listIds.map((value) => ({ value })),
      },
    },
  });
}

const get = (h: Harness, a: TestAccount, url: string, accept?: string) =>
  call(h.app, 'GET', url, { token: a.token, accept });

const noInfo = { info1: '', info2: '', info3: '', info4: '' };

describeEachDialect('campaign history', (h) => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });

  it('GET /campaigns filters by messages sent, text and destination, and sorts by id, date, text, cost and status', async () => {
    const a = await h().account();
    const b = await h().account();
    const shared = fresh(1)[0];
    // Sent in this order, due in another: ids and dates sort differently.
    const c1 = await send(h(), a, fresh(1), { text: 'alpha Promo 50%', delay: '2030-05-03 10:00:00' });
    const c2 = await send(h(), a, [...fresh(2), shared], {
      text: 'beta promo',
      delay: '2030-05-01 10:00:00',
    });
    const c3 = await send(h(), a, [shared, fresh(1)[0], 'not a number'], {
      text: 'gamma news',
      delay: '2030-05-04 10:00:00',
    });
    // 200 GSM-7 characters: 2 parts for its one message.
    const c4 = await send(h(), a, fresh(1), {
      text: `delta ${'x'.repeat(194)}`,
      delay: '2030-05-02 10:00:00',
    });
    expect((await call(h().app, 'DELETE', `/send/${c3}`, { token: a.token })).body.status).toBe(1);
    // Another account wrote to the shared number too, with text that matches.
    await send(h(), b, [shared], { text: 'promo for b' });

    const ids = async (query: string) => {
      const r = await get(h(), a, `/campaigns${query}`);
      expect(r.body.status, `${query}: ${r.body.details}`).toBe(1);
      expect(r.body.totalRecords, query).toBe(4);
      if (!query.includes('length=')) expect(r.body.totalDisplayRecords, query).toBe(r.body.campaigns.length);
      return r.body.campaigns.map((c: { id: string }) => c.id);
    };
    // Bounds on the messages sent (recipients kept), not on parts: c4 sent one message of two parts.
    expect(await ids('?sms_min=2')).toEqual([c3, c2]);
    expect(await ids('?sms_max=1')).toEqual([c1, c4]);
    expect(await ids('?sms_min=2&sms_max=2')).toEqual([c3]);
    expect(await ids('?sms_min=0&sms_max=1000')).toEqual([c3, c1, c4, c2]);
    // A piece of the text, without case; % is a character like any other.
    expect(await ids('?text=promo')).toEqual([c1, c2]);
    expect(await ids('?text=50%25')).toEqual([c1]);
    expect(await ids('?text=%25')).toEqual([c1]);
    expect(await ids('?text=PROMO%2050')).toEqual([c1]);
    expect(await ids('?text=nothing%20like%20it')).toEqual([]);
    // The campaigns that wrote to a number, given as a send would take it.
    expect(await ids(`?destination=${shared}`)).toEqual([c3, c2]);
    expect(await ids(`?destination=%2B${shared.slice(0, 2)}%20${shared.slice(2)}`)).toEqual([c3, c2]);
    expect(await ids(`?destination=00${shared}`)).toEqual([c3, c2]);
    expect(await ids(`?destination=${fresh(1)[0]}`)).toEqual([]);
    expect(await ids(`?destination=${shared}&date_start=2030-05-02%2000:00:00`)).toEqual([c3]);
    expect(await ids('?text=promo&sms_min=2')).toEqual([c2]);

    expect(await ids('?sort=id')).toEqual([c1, c2, c3, c4]);
    expect(await ids('?sort=-id')).toEqual([c4, c3, c2, c1]);
    expect(await ids('?sort=date')).toEqual([c2, c4, c1, c3]);
    expect(await ids('?sort=text')).toEqual([c1, c2, c4, c3]);
    expect(await ids('?sort=-text')).toEqual([c3, c4, c2, c1]);
    // Equal costs keep the id order of the direction asked; c3, cancelled and refunded, costs 0.
    expect(await ids('?sort=cost')).toEqual([c3, c1, c4, c2]);
    expect(await ids('?sort=-cost')).toEqual([c2, c4, c1, c3]);
    // The stored status: cancelled before the others, which derive theirs on read.
    expect(await ids('?sort=status')).toEqual([c3, c1, c2, c4]);
    expect(await ids('?sort=-status')).toEqual([c4, c2, c1, c3]);
    expect(await ids('?sort=cost&start=1&length=2')).toEqual([c1, c4]);
    const paged = await get(h(), a, '/campaigns?sms_min=2&length=1');
    expect(paged.body).toMatchObject({ totalRecords: 4, totalDisplayRecords: 2, campaigns: [{ id: c3 }] });

    const long = 'é'.repeat(161);
    for (const [query, details] of [
      ['?sms_min=x', /^sms_min "x" must be a whole number ≥ 0$/],
      ['?sms_max=-1', /^sms_max "-1" must be a whole number ≥ 0$/],
      ['?sms_min=3&sms_max=2', /^sms_min "3" is more than sms_max "2"$/],
      [`?text=${encodeURIComponent(long)}`, /^text is 161 characters long; a text filter holds at most 160$/],
      ['?destination=abc', /^destination "abc" must be a phone number in international format/],
      ['?destination=0612345678', /^destination "0612345678" must be a phone number/],
      ['?sort=sender', /^sort "sender" must be one of id, date, text, cost, status, with a leading -/],
      ['?sort=-', /^sort "-" must be one of/],
      ['?sort=id,date', /^sort "id,date" must be one of/],
    ] as const) {
      const r = await get(h(), a, `/campaigns${query}`);
      expect(r.httpCode).toBe(200);
      expect(r.body, query).toMatchObject({ status: -7, message: 'Data error' });
      expect(r.body.details, query).toMatch(details);
    }
  });

  it("B's campaigns never show in A's history, a sub-account's never in its parent's, and filters see only the caller's", async () => {
    const parent = await h().account();
    const child = await h().account({ parentId: parent.id });
    const other = await h().account();
    const number = fresh(1)[0];
    const theirs = await send(h(), other, [number], { text: 'shared words' });
    const childs = await send(h(), child, [number], { text: 'shared words' });
    const ours = await send(h(), parent, [number], { text: 'shared words' });
    for (const query of ['', `?destination=${number}`, '?text=shared', '?sms_min=1']) {
      const r = await get(h(), parent, `/campaigns${query}`);
      expect(r.body, query).toMatchObject({ status: 1, totalRecords: 1, totalDisplayRecords: 1 });
      expect(r.body.campaigns.map((c: { id: string }) => c.id)).toEqual([ours]);
    }
    expect((await get(h(), child, '/campaigns')).body.campaigns.map((c: { id: string }) => c.id)).toEqual([
      childs,
    ]);
    for (const ticket of [theirs, childs]) {
      for (const path of ['', '/mo', '/blacklist', '/npai']) {
        const r = await get(h(), parent, `/campaign/${ticket}${path}`);
        expect(r.body, path).toMatchObject({ status: -5, details: `campaign "${ticket}" not found` });
      }
    }
  });

  it('a campaign sent to lists names them (a deleted list too); a plain send and a simulation name none', async () => {
    const a = await h().account();
    const numbers = fresh(3);
    const first = await createList(h(), a, [{ value: numbers[0] }, { value: numbers[1] }]);
    const second = await createList(h(), a, [{ value: numbers[2] }, { value: numbers[0] }]);
    const campaignsBefore = (await get(h(), a, '/campaigns')).body.totalRecords;
    const simulated = await sendLists(h(), a, [second, first], true);
    expect(simulated.body).toMatchObject({ status: 1, sent: 3 });
    expect((await get(h(), a, '/campaigns')).body.totalRecords).toBe(campaignsBefore);

    const sent = await sendLists(h(), a, [second, first]);
    expect(sent.body).toMatchObject({ status: 1, sent: 3, duplicated: 1 });
    const ticket = sent.body.ticket;
    const plain = await send(h(), a, fresh(1));
    const listsOf = async (id: string) => {
      const r = await get(h(), a, `/campaign/${id}`);
      expect(r.body.status, r.body.details).toBe(1);
      return r.body.campaign[0].lists;
    };
    const inOrder = [first, second].sort((x, y) => Number(x) - Number(y));
    expect(await listsOf(ticket)).toEqual(inOrder.map((id) => ({ id })));
    expect(await listsOf(plain)).toEqual([]);
    const history = (await get(h(), a, '/campaigns?sort=-id')).body.campaigns;
    expect(history.map((c: { id: string; lists: unknown }) => [c.id, c.lists])).toEqual([
      [plain, []],
      [ticket, inOrder.map((id) => ({ id }))],
    ]);
    const rows = await h()
      .deps.store.db.selectFrom('campaign_lists')
      .select(['campaign_id', 'list_id', 'account_id'])
      .where('account_id', '=', a.id)
      .orderBy('list_id')
      .execute();
    expect(rows).toEqual(
      inOrder.map((id) => ({ campaign_id: Number(ticket), list_id: Number(id), account_id: a.id })),
    );

    // The list is gone; the campaign still names the list it was sent to.
    expect((await call(h().app, 'DELETE', `/list/${first}`, { token: a.token })).body.status).toBe(1);
    expect(await listsOf(ticket)).toEqual(inOrder.map((id) => ({ id })));

    // In XML, each list is a repeated <lists> element holding its <id>.
    const x = await get(h(), a, `/campaign/${ticket}`, 'application/xml');
    expect(x.raw).toContain(`<lists><id>${inOrder[0]}</id></lists><lists><id>${inOrder[1]}</id></lists>`);
    const j = await get(h(), a, `/campaign/${ticket}`, 'application/json');
    expect(x.body).toEqual(asXmlWouldSay(j.body));
  });

  it("replies, STOPs and NPAI numbers of a list campaign tell the contact's fields; a plain campaign's tell none", async () => {
    const a = await h().account();
    const [ann, bob, carl] = fresh(3);
    const npai = '33655990000';
    const list = await createList(h(), a, [
      { value: ann, info1: 'Ann', info2: 'Lee' },
      { value: bob, info1: 'Bob', info3: 'VIP', info4: '42' },
      { value: carl, info1: 'Carl' },
      { value: npai, info1: 'Nina', info2: 'Gone' },
    ]);
    const sent = await sendLists(h(), a, [list]);
    expect(sent.body).toMatchObject({ status: 1, sent: 4 });
    const ticket = sent.body.ticket;
    const worker = testDeliveryWorker(h(), deliveringSimulator());
    await worker.start();
    workers.push(worker);
    await waitFor(async () => {
      const states = await h()
        .deps.store.db.selectFrom('messages')
        .select('state')
        .where('campaign_id', '=', Number(ticket))
        .execute();
      return states.every((m) => m.state === 'delivered' || m.state === 'failed');
    }, 'final states');
    const replies = h().deps.services.replies;
    await replies.recordInbound({ from: ann, to: 'x', text: 'Merci' });
    await replies.recordInbound({ from: carl, to: 'x', text: 'Qui est-ce ?' });
    await replies.recordInbound({ from: bob, to: 'x', text: 'STOP' });
    // Carl's contact is deleted since: his reply tells no fields.
    const carlContact = await h()
      .deps.store.db.selectFrom('contacts')
      .select('id')
      .where('account_id', '=', a.id)
      .where('number', '=', carl)
      .executeTakeFirstOrThrow();
    const removed = await call(h().app, 'DELETE', `/list/contact/${carlContact.id}`, { token: a.token });
    expect(removed.body.status, removed.body.details).toBe(1);

    const date = expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect((await get(h(), a, `/campaign/${ticket}/mo`)).body).toEqual({
      status: 1,
      message: 'OK',
      replies: [
        { destination: ann, message: 'Merci', date, info1: 'Ann', info2: 'Lee', info3: '', info4: '' },
        { destination: carl, message: 'Qui est-ce ?', date, ...noInfo },
      ],
      totalRecords: 2,
      totalDisplayRecords: 2,
    });
    expect((await get(h(), a, `/campaign/${ticket}/blacklist`)).body).toEqual({
      status: 1,
      message: 'OK',
      stops: [{ destination: bob, date, info1: 'Bob', info2: '', info3: 'VIP', info4: '42' }],
      totalRecords: 1,
      totalDisplayRecords: 1,
    });
    expect((await get(h(), a, `/campaign/${ticket}/npai`)).body).toEqual({
      status: 1,
      message: 'OK',
      npais: [{ destination: npai, date, info1: 'Nina', info2: 'Gone', info3: '', info4: '' }],
      totalRecords: 1,
      totalDisplayRecords: 1,
    });

    // The same number written to again by a plain campaign: its replies are that campaign's, without fields.
    const plain = await send(h(), a, [ann]);
    await replies.recordInbound({ from: ann, to: 'x', text: 'Encore moi' });
    expect((await get(h(), a, `/campaign/${plain}/mo`)).body.replies).toEqual([
      { destination: ann, message: 'Encore moi', date, ...noInfo },
    ]);

    // XML: the same fields, every one a string, the empty ones empty elements.
    const both = async (url: string): Promise<[CallResult, CallResult]> => [
      await get(h(), a, url, 'application/json'),
      await get(h(), a, url, 'application/xml'),
    ];
    const [j, x] = await both(`/campaign/${ticket}/mo`);
    expect(x.body).toEqual(asXmlWouldSay(j.body));
    expect(x.raw).toContain('<info1>Ann</info1><info2>Lee</info2><info3></info3><info4></info4>');
  });

  it('answers GET /campaigns with filters in JSON and XML alike', async () => {
    const a = await h().account();
    const list = await createList(h(), a, [{ value: fresh(1)[0] }]);
    const other = await createList(h(), a, [{ value: fresh(1)[0] }]);
    expect((await sendLists(h(), a, [list, other])).body.status).toBe(1);
    await send(h(), a, fresh(2), { text: 'Bonjour à tous' });
    const url = '/campaigns?text=bonjour&sort=-cost&length=10';
    const j = await get(h(), a, url, 'application/json');
    const x = await get(h(), a, url, 'application/xml');
    expect(j.body).toMatchObject({ status: 1, totalRecords: 2, totalDisplayRecords: 2 });
    expect(j.body.campaigns[1].lists).toHaveLength(2);
    expect(x.contentType).toContain('application/xml');
    expect(x.body).toEqual(asXmlWouldSay(j.body));
    const bad = await get(h(), a, '/campaigns?sms_min=many', 'application/xml');
    expect(bad.body).toEqual({
      status: '-7',
      message: 'Data error',
      details: 'sms_min "many" must be a whole number ≥ 0',
    });
  });
});
