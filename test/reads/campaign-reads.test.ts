// Reading campaigns back: counters after a real worker run through the simulator, status words, replies
// and STOPs, NPAI numbers and blacklisting them, the paged history, tenant isolation and JSON/XML parity.
// The history's filters and list campaigns are in campaign-history.test.ts, the message and reply history
// in messages-history.test.ts.
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { zonedTime } from '../../src/shared/zoned-time.ts';
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

const { wallTime } = zonedTime('Europe/Paris');

const browser = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';

/** Distinct numbers per call, so a reply is always attributed to the campaign that wrote to its number. */
let block = 0;
function numbers() {
  block++;
  const n = (suffix: string) =>
    `336${String(10 + block).padStart(2, '0')}${'0'.repeat(6 - suffix.length)}${suffix}`;
  return {
    delivered: [n('11'), n('12'), n('13')],
    npai: n('0000'),
    rejected: n('0001'),
    expired: n('0002'),
  };
}

async function send(
  h: Harness,
  a: TestAccount,
  recipients: string[],
  options: { text?: string; links?: string[]; delay?: string } = {},
) {
  const message: Record<string, unknown> = { text: options.text ?? 'Votre colis arrive', pushtype: 'alert' };
  if (options.links) message.links = options.links;
  if (options.delay) message.delay = options.delay;
  const r = await call(h.app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: {
        message: { ...message, sender: 'Pigeon' },
        recipients: { gsm: recipients.map((value, i) => ({ value, gsmsmsid: `g${i}` })) },
      },
    },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.ticket as string;
}

const get = (h: Harness, a: TestAccount, url: string, accept?: string) =>
  call(h.app, 'GET', url, { token: a.token, accept });

/** Gives the campaign's messages, in their order, the final states the delivery service would write. */
async function settle(h: Harness, ticket: string, outcomes: { state: string; dlr_status: number }[]) {
  const db = h.deps.store.db;
  const rows = await db
    .selectFrom('messages')
    .select('id')
    .where('campaign_id', '=', Number(ticket))
    .orderBy('seq')
    .execute();
  for (const [i, row] of rows.entries()) {
    await db.updateTable('messages').set(outcomes[i]).where('id', '=', row.id).execute();
  }
}

async function campaignOf(h: Harness, a: TestAccount, ticket: string) {
  const r = await get(h, a, `/campaign/${ticket}`);
  expect(r.body.status, r.body.details).toBe(1);
  expect(r.body.campaign).toHaveLength(1);
  return r.body.campaign[0];
}

const messageStates = (h: Harness, ticket: string) =>
  h.deps.store.db
    .selectFrom('messages')
    .select(['state', 'dlr_status'])
    .where('campaign_id', '=', Number(ticket))
    .execute();

const allFinal = (h: Harness, ticket: string) => async () =>
  (await messageStates(h, ticket)).every((m) => ['delivered', 'failed', 'expired'].includes(m.state));

describeEachDialect('campaign reads', (h) => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });

  async function startWorker(dlrDelayMs = 0) {
    const worker = testDeliveryWorker(h(), deliveringSimulator(dlrDelayMs));
    await worker.start();
    workers.push(worker);
    return worker;
  }

  it('counters after a worker run: delivered, error, expired, npai, rate, clicks, STOPs; status done', async () => {
    const a = await h().account();
    const n = numbers();
    const recipients = [...n.delivered, n.npai, n.rejected, n.expired];
    const ticket = await send(h(), a, recipients, {
      text: 'Suivez votre colis <-short->',
      links: ['https://shop.example/track'],
    });
    expect(await campaignOf(h(), a, ticket)).toMatchObject({
      status: 'Scheduled',
      state: 'scheduled',
      total: 6,
      pending: 6,
    });

    await startWorker();
    await waitFor(allFinal(h(), ticket), 'final states');

    // Two clicks on one recipient's link, one on another's, through the links service's recording path.
    const links = h().deps.services.links;
    const codes = await h()
      .deps.store.db.selectFrom('links')
      .select('code')
      .where('campaign_id', '=', Number(ticket))
      .orderBy('message_seq')
      .execute();
    for (const code of [codes[0].code, codes[0].code, codes[1].code]) {
      const target = await links.resolve(code);
      expect(target).toBeDefined();
      const outcome = await links.recordVisit(target!, {
        head: false,
        headers: { 'user-agent': browser },
        address: '127.0.0.1',
      });
      expect(outcome).toBe('counted');
    }
    // Counted into the links' counters by the fold (which the link server's process runs shortly after).
    await h().deps.services.clickFold.foldClicks(1000);
    // A STOP and a plain reply from recipients of this campaign.
    const replies = h().deps.services.replies;
    expect(await replies.recordInbound({ from: n.delivered[0], to: 'x', text: 'Stop' })).toMatchObject({
      type: 'STOP',
    });
    expect(
      await replies.recordInbound({ from: `+${n.delivered[1]}`, to: 'x', text: 'Merci !' }),
    ).toMatchObject({
      type: 'MO',
    });

    expect(await campaignOf(h(), a, ticket)).toEqual({
      id: ticket,
      sender: 'Pigeon',
      text: 'Suivez votre colis <-short->',
      creation_date: '2026-01-05 10:00:00',
      date: '2026-01-05 10:00:00',
      cost: 6,
      lists: [],
      status: 'Sent',
      state: 'done',
      total: 6,
      delivered: 3,
      error: 1,
      expired: 1,
      network_error: 0,
      stop: 1,
      npai: 1,
      pending: 0,
      delivery_rate: 50,
      clicks: 3,
    });
  });

  it('status goes scheduled → sending → sent → done as the worker takes, submits and hears back', async () => {
    const a = await h().account();
    const n = numbers();
    const ticket = await send(h(), a, n.delivered);
    expect(await campaignOf(h(), a, ticket)).toMatchObject({ status: 'Scheduled', state: 'scheduled' });

    const delivery = h().deps.services.delivery;
    await delivery.claim(10_000);
    expect(await campaignOf(h(), a, ticket)).toMatchObject({
      status: 'Sending',
      state: 'sending',
      pending: 3,
    });

    // Leases released, a long receipt delay: every message is submitted and none has its receipt yet.
    h().clock.advance(h().config.LEASE_SECONDS * 1000 + 1);
    await delivery.releaseExpiredLeases();
    expect((await campaignOf(h(), a, ticket)).state).toBe('sending');
    await startWorker(3_600_000);
    await waitFor(
      async () => (await messageStates(h(), ticket)).every((m) => m.state === 'submitted'),
      'submitted',
    );
    expect(await campaignOf(h(), a, ticket)).toMatchObject({
      status: 'Sent',
      state: 'sent',
      pending: 3,
      delivered: 0,
    });

    const smscIds = await h()
      .deps.store.db.selectFrom('messages')
      .select('smsc_id')
      .where('campaign_id', '=', Number(ticket))
      .execute();
    await delivery.recordReceipts(smscIds.map((m) => ({ smscId: m.smsc_id!, stat: 'DELIVRD', err: '000' })));
    expect(await campaignOf(h(), a, ticket)).toMatchObject({
      status: 'Sent',
      state: 'done',
      pending: 0,
      delivered: 3,
      delivery_rate: 100,
    });
  });

  it("delivery_rate is exact to the hundredth by ticket (2 of 3: 66.67) and a whole percent in GET /campaigns, which SMSFactor's Java SDK reads as an integer", async () => {
    const a = await h().account();
    const n = numbers();
    const ticket = await send(h(), a, n.delivered);
    await settle(h(), ticket, [
      { state: 'delivered', dlr_status: 3 },
      { state: 'delivered', dlr_status: 3 },
      { state: 'failed', dlr_status: 2 },
    ]);
    expect(await campaignOf(h(), a, ticket)).toMatchObject({
      status: 'Sent',
      state: 'done',
      delivery_rate: 66.67,
    });
    const list = await get(h(), a, '/campaigns');
    expect(list.body.campaigns[0]).toMatchObject({
      id: ticket,
      status: 'Sent',
      state: 'done',
      delivery_rate: 66,
    });
    const xml = await get(h(), a, `/campaign/${ticket}`, 'application/xml');
    expect(xml.raw).toContain('<status>Sent</status><state>done</state>');
    expect(xml.raw).toContain('<delivery_rate>66.67</delivery_rate>');
  });

  it('a network error (DLR 11) is counted apart from other failures', async () => {
    // No transport reports 11 yet; the counter is checked on the state the delivery service would write.
    const a = await h().account();
    const n = numbers();
    const ticket = await send(h(), a, n.delivered);
    await settle(h(), ticket, [
      { state: 'failed', dlr_status: 11 },
      { state: 'failed', dlr_status: 9 },
      { state: 'delivered', dlr_status: 3 },
    ]);
    expect(await campaignOf(h(), a, ticket)).toMatchObject({
      status: 'Sent',
      state: 'done',
      network_error: 1,
      error: 1,
      delivered: 1,
      delivery_rate: 33.33,
    });
  });

  it('replies and STOPs read back through /mo and /blacklist, oldest first, paged', async () => {
    const a = await h().account();
    const n = numbers();
    const ticket = await send(h(), a, n.delivered);
    await startWorker();
    await waitFor(allFinal(h(), ticket), 'final states');
    const replies = h().deps.services.replies;
    const startedAt = h().clock.now();
    const at = (laterMs: number) => wallTime(startedAt + laterMs);
    await replies.recordInbound({ from: n.delivered[0], to: 'x', text: 'Bien reçu' });
    h().clock.advance(60_000);
    await replies.recordInbound({ from: n.delivered[1], to: 'x', text: 'STOP' });
    await replies.recordInbound({ from: n.delivered[2], to: 'x', text: 'À quelle heure ?' });
    h().clock.advance(60_000);
    await replies.recordInbound({ from: n.delivered[2], to: 'x', text: 'arret' });

    const noInfo = { info1: '', info2: '', info3: '', info4: '' };
    const mo = await get(h(), a, `/campaign/${ticket}/mo`);
    expect(mo.body).toEqual({
      status: 1,
      message: 'OK',
      replies: [
        { destination: n.delivered[0], message: 'Bien reçu', date: at(0), ...noInfo },
        { destination: n.delivered[2], message: 'À quelle heure ?', date: at(60_000), ...noInfo },
      ],
      totalRecords: 2,
      totalDisplayRecords: 2,
    });
    const stops = await get(h(), a, `/campaign/${ticket}/blacklist`);
    expect(stops.body).toEqual({
      status: 1,
      message: 'OK',
      stops: [
        { destination: n.delivered[1], date: at(60_000), ...noInfo },
        { destination: n.delivered[2], date: at(120_000), ...noInfo },
      ],
      totalRecords: 2,
      totalDisplayRecords: 2,
    });
    expect((await campaignOf(h(), a, ticket)).stop).toBe(2);

    const second = await get(h(), a, `/campaign/${ticket}/mo?start=1&length=1`);
    expect(second.body).toMatchObject({
      replies: [{ message: 'À quelle heure ?' }],
      totalRecords: 2,
      totalDisplayRecords: 2,
    });
    expect((await get(h(), a, `/campaign/${ticket}/mo?length=1001`)).body).toMatchObject({ status: -7 });
    expect((await get(h(), a, `/campaign/${ticket}/blacklist?start=-1`)).body).toMatchObject({ status: -7 });
    // The STOPs put their numbers on the account's blacklist (the delivery side's rule).
    const blacklist = await get(h(), a, '/blacklist?length=1000');
    const listed = blacklist.body.list.map((b: { destination: string }) => b.destination);
    expect(listed).toEqual(expect.arrayContaining([n.delivered[1], n.delivered[2]]));
  });

  it('/npai lists the numbers that do not exist; PUT /npai blacklists them once', async () => {
    const a = await h().account();
    const n = numbers();
    const ticket = await send(h(), a, [n.delivered[0], n.npai, n.rejected]);
    await startWorker();
    await waitFor(allFinal(h(), ticket), 'final states');
    const npai = await get(h(), a, `/campaign/${ticket}/npai`);
    expect(npai.body).toEqual({
      status: 1,
      message: 'OK',
      npais: [
        {
          destination: n.npai,
          date: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
          info1: '',
          info2: '',
          info3: '',
          info4: '',
        },
      ],
      totalRecords: 1,
      totalDisplayRecords: 1,
    });
    const blacklisted = () => get(h(), a, '/blacklist?length=1000');
    expect((await blacklisted()).body.list).not.toContainEqual(
      expect.objectContaining({ destination: n.npai }),
    );
    const put = await call(h().app, 'PUT', `/campaign/${ticket}/npai`, { token: a.token });
    expect(put.body).toEqual({ status: 1, message: 'OK', NPAI: 1, added_contacts: 1 });
    // The blacklist entry names the campaign it came from.
    expect((await blacklisted()).body.list).toContainEqual(
      expect.objectContaining({ destination: n.npai, campaign_id: String(ticket) }),
    );
    expect((await blacklisted()).body.list).not.toContainEqual(
      expect.objectContaining({ destination: n.rejected }),
    );
    const again = await call(h().app, 'PUT', `/campaign/${ticket}/npai`, { token: a.token });
    expect(again.body).toMatchObject({ status: 1, NPAI: 0, added_contacts: 0 });
  });

  it('PUT /npai blacklists every NPAI number of a campaign larger than a page, counting only the new ones', async () => {
    const a = await h().account({ credits: 5000 });
    // 2,500 recipients, of which 2,100 NPAI: the numbers come from delivery in keyset pages of 1,000.
    const recipients = Array.from({ length: 2500 }, (_, i) => `3367${String(1_000_000 + i)}`);
    const ticket = await send(h(), a, recipients);
    const db = h().deps.store.db;
    await db
      .updateTable('messages')
      .set({ state: 'failed', dlr_status: 5 })
      .where('campaign_id', '=', Number(ticket))
      .where('seq', '<', 2100)
      .execute();
    // Two of them are on the blacklist already.
    const listed = await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: recipients[5] }, { value: recipients[1500] }] } } },
    });
    expect(listed.body).toMatchObject({ status: 1, added_contacts: 2 });

    const put = await call(h().app, 'PUT', `/campaign/${ticket}/npai`, { token: a.token });
    expect(put.body).toEqual({ status: 1, message: 'OK', NPAI: 2098, added_contacts: 2098 });
    const blacklisted = await db
      .selectFrom('blacklist')
      .select('number')
      .where('account_id', '=', a.id)
      .execute();
    expect(new Set(blacklisted.map((b) => b.number))).toEqual(new Set(recipients.slice(0, 2100)));
    expect((await campaignOf(h(), a, ticket)).npai).toBe(2100);
  });

  it('GET /campaigns pages the account’s campaigns by date, filters by date range, sorts both ways', async () => {
    const a = await h().account();
    const other = await h().account();
    await send(h(), other, numbers().delivered.slice(0, 1), { delay: '2030-02-02 12:00:00' });
    const n = numbers().delivered;
    const first = await send(h(), a, [n[0]], { delay: '2030-02-01 10:00:00' });
    const second = await send(h(), a, [n[1]], { delay: '2030-02-02 10:00:00' });
    const third = await send(h(), a, [n[2]], { delay: '2030-02-03 10:00:00' });
    const ids = async (query = '') => {
      const r = await get(h(), a, `/campaigns${query}`);
      expect(r.body.status, r.body.details).toBe(1);
      // totalRecords: all of the account's campaigns; totalDisplayRecords: those the filters keep.
      expect(r.body.totalRecords).toBe(3);
      return { ids: r.body.campaigns.map((c: { id: string }) => c.id), shown: r.body.totalDisplayRecords };
    };
    expect(await ids()).toEqual({ ids: [third, second, first], shown: 3 });
    expect(await ids('?sort=date')).toEqual({ ids: [first, second, third], shown: 3 });
    expect(await ids('?sort=-date')).toEqual({ ids: [third, second, first], shown: 3 });
    expect(await ids('?start=1&length=1')).toEqual({ ids: [second], shown: 3 });
    expect(await ids('?start=3')).toEqual({ ids: [], shown: 3 });
    expect(await ids('?date_start=2030-02-02%2000:00:00')).toEqual({ ids: [third, second], shown: 2 });
    // date_end is inclusive to the second.
    expect(await ids('?date_end=2030-02-02%2010:00:00&sort=DATE')).toEqual({
      ids: [first, second],
      shown: 2,
    });
    expect(await ids('?date_start=2030-02-02%2010:00:01&date_end=2030-02-03%2010:00:00')).toEqual({
      ids: [third],
      shown: 1,
    });
    const listed = (await get(h(), a, '/campaigns?length=1')).body.campaigns[0];
    expect(listed).toEqual(await campaignOf(h(), a, third));

    for (const [query, details] of [
      ['?length=1001', /length "1001" must be a whole number from 1 to 1000/],
      ['?length=0', /length "0"/],
      ['?start=x', /start "x"/],
      [
        '?sort=asc',
        /sort "asc" must be one of id, date, text, cost, status, with a leading - to sort descending/,
      ],
      ['?sort=--date', /sort "--date"/],
      ['?date_start=2030-02-30%2000:00:00', /date_start "2030-02-30 00:00:00" must be a date/],
      ['?date_end=yesterday', /date_end "yesterday" must be a date/],
      ['?date_start=2030-02-03%2000:00:00&date_end=2030-02-01%2000:00:00', /is after date_end/],
    ] as const) {
      const r = await get(h(), a, `/campaigns${query}`);
      expect(r.body.status, query).toBe(-7);
      expect(r.body.details).toMatch(details);
    }
  });

  it("B's ticket is -5 on every campaign endpoint, and B's campaign is untouched", async () => {
    const a = await h().account();
    const b = await h().account({ credits: 10 });
    const n = numbers();
    const theirs = await send(h(), b, [n.delivered[0]], { delay: '2030-03-01 10:00:00' });
    for (const [method, url] of [
      ['GET', `/campaign/${theirs}`],
      ['GET', `/campaign/${theirs}/mo`],
      ['GET', `/campaign/${theirs}/blacklist`],
      ['GET', `/campaign/${theirs}/npai`],
      ['PUT', `/campaign/${theirs}/npai`],
      ['DELETE', `/send/${theirs}`],
      ['GET', '/campaign/424242424'],
      ['GET', '/campaign/abc/mo'],
    ] as const) {
      const r = await call(h().app, method, url, { token: a.token });
      expect(r.body.status, `${method} ${url}`).toBe(-5);
      expect(r.body.details).toMatch(/^campaign ".+" not found$/);
    }
    expect((await get(h(), a, '/campaigns')).body).toMatchObject({
      campaigns: [],
      totalRecords: 0,
      totalDisplayRecords: 0,
    });
    expect(await campaignOf(h(), b, theirs)).toMatchObject({ status: 'Scheduled', total: 1 });
    expect((await call(h().app, 'GET', '/credits', { token: b.token })).body.credits).toBe(9);
  });

  it('answers the same fields in JSON and XML', async () => {
    const a = await h().account();
    const n = numbers();
    const ticket = await send(h(), a, [
      n.delivered[0],
      n.delivered[1],
      n.delivered[2],
      n.npai,
      `${n.npai.slice(0, 5)}910000`,
    ]);
    await send(h(), a, [numbers().delivered[0]], { delay: '2030-04-01 10:00:00' });
    await startWorker();
    await waitFor(allFinal(h(), ticket), 'final states');
    const replies = h().deps.services.replies;
    await replies.recordInbound({ from: n.delivered[0], to: 'x', text: 'Oui <ok> & merci' });
    await replies.recordInbound({ from: n.delivered[1], to: 'x', text: 'Non' });
    await replies.recordInbound({ from: n.delivered[1], to: 'x', text: 'STOP' });
    await replies.recordInbound({ from: n.delivered[2], to: 'x', text: 'STOP SMS' });

    const both = async (method: string, url: string): Promise<[CallResult, CallResult]> => {
      const j = await call(h().app, method, url, { token: a.token, accept: 'application/json' });
      const x = await call(h().app, method, url, { token: a.token, accept: 'application/xml' });
      expect(j.contentType).toContain('application/json');
      expect(x.contentType).toContain('application/xml');
      expect(x.raw.startsWith('<?xml version="1.0" encoding="UTF-8"?><response>')).toBe(true);
      return [j, x];
    };
    const expectSame = ([j, x]: [CallResult, CallResult], arrayKey: string) => {
      expect(j.body.status, j.body.details).toBe(1);
      expect(j.body[arrayKey].length).toBeGreaterThanOrEqual(2);
      expect(x.body).toEqual(asXmlWouldSay(j.body));
    };
    const [one] = await both('GET', `/campaign/${ticket}`);
    expect(one.body.campaign[0]).toMatchObject({ npai: 2, delivered: 3, stop: 2 });
    const [jOne, xOne] = await both('GET', `/campaign/${ticket}`);
    expect(xOne.body).toEqual(asXmlWouldSay(jOne.body));
    expectSame(await both('GET', '/campaigns'), 'campaigns');
    expectSame(await both('GET', `/campaign/${ticket}/mo`), 'replies');
    expectSame(await both('GET', `/campaign/${ticket}/blacklist`), 'stops');
    expectSame(await both('GET', `/campaign/${ticket}/npai`), 'npais');
    const [jPut, xPut] = await both('PUT', `/campaign/${ticket}/npai`);
    expect(jPut.body).toEqual({ status: 1, message: 'OK', NPAI: 2, added_contacts: 2 });
    expect(xPut.body).toEqual({ status: '1', message: 'OK', NPAI: '0', added_contacts: '0' });
  });
});
