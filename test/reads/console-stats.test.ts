// The reads behind the console's dashboard and campaign page: the account's messages per day of TIMEZONE
// (GET /statistics/daily), a campaign's clicks over time (GET /campaign/:ticket/clicks) and its messages with
// their state and clicks (GET /campaign/:ticket/messages). Messages and clicks are placed on days by the
// harness's clock, across the spring change of Europe/Paris (2026-03-29, 02:00 → 03:00), so a day is read as
// the zone's wall clock has it; each read is checked in JSON and XML, and against another account.
import { DateTime } from 'luxon';
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';
import { asXmlWouldSay } from '../helpers/xml.ts';

const zone = 'Europe/Paris';
/** Epoch ms of a wall time in Paris, `2026-03-29 00:30`. */
const paris = (wall: string) => {
  const at = DateTime.fromFormat(wall, 'yyyy-MM-dd HH:mm', { zone });
  if (!at.isValid) throw new Error(`bad wall time ${wall}`);
  return at.toMillis();
};

const browser = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';

/** Numbers distinct per call: the simulator fails those ending 0001 (rejected, DLR 9) and 0002 (expired, 12). */
let block = 0;
function numbers(count: number) {
  block++;
  const base = `3361${String(block).padStart(3, '0')}`;
  return {
    ok: Array.from({ length: count }, (_, i) => `${base}1${String(i).padStart(3, '0')}`),
    rejected: `${base}0001`,
    expired: `${base}0002`,
  };
}

async function send(
  h: Harness,
  a: TestAccount,
  recipients: string[],
  options: { links?: string[]; delay?: string } = {},
) {
  const message: Record<string, unknown> = {
    text: options.links ? 'Votre colis <-short->' : 'Votre colis arrive',
    pushtype: 'alert',
    sender: 'Pigeon',
  };
  if (options.links) message.links = options.links;
  if (options.delay) message.delay = options.delay;
  const r = await call(h.app, 'POST', '/send', {
    token: a.token,
    json: {
      sms: { message, recipients: { gsm: recipients.map((value, i) => ({ value, gsmsmsid: `g${i}` })) } },
    },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.ticket as string;
}

const get = (h: Harness, a: TestAccount, url: string, accept?: string) =>
  call(h.app, 'GET', url, { token: a.token, accept });

/** The answer in JSON, after checking that the XML one says the same. */
async function read(h: Harness, a: TestAccount, url: string) {
  const json = await get(h, a, url);
  expect(json.body.status, `${url}: ${json.body.details}`).toBe(1);
  const xml = await get(h, a, url, 'application/xml');
  expect(xml.contentType).toContain('application/xml');
  const arrays = (value: unknown) =>
    Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        // One repeated element reads back as an object: the harness only knows the older answers' arrays.
        Array.isArray(json.body[k]) && json.body[k].length === 1 && !Array.isArray(v) ? [v] : v,
      ]),
    );
  expect(arrays(xml.body)).toEqual(asXmlWouldSay(json.body));
  return json.body;
}

const finalStates = ['delivered', 'failed', 'expired'];

describeEachDialect('console statistics', (h) => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });

  /** Delivers the campaign's messages through the simulator, on the harness's clock as it stands. */
  async function deliver(ticket: string) {
    const worker = testDeliveryWorker(h(), deliveringSimulator(0));
    await worker.start();
    workers.push(worker);
    await waitFor(
      async () =>
        (
          await h()
            .deps.store.db.selectFrom('messages')
            .select('state')
            .where('campaign_id', '=', Number(ticket))
            .execute()
        ).every((m) => finalStates.includes(m.state)),
      `campaign ${ticket} final`,
    );
    await worker.stop();
    workers.splice(workers.indexOf(worker), 1);
  }

  async function click(code: string, at: number) {
    h().clock.set(at);
    const links = h().deps.services.links;
    const target = await links.resolve(code);
    expect(target).toBeDefined();
    const outcome = await links.recordVisit(target!, {
      head: false,
      headers: { 'user-agent': browser },
      address: '127.0.0.1',
    });
    expect(outcome).toBe('counted');
  }

  const codesOf = (ticket: string) =>
    h()
      .deps.store.db.selectFrom('links')
      .select(['code', 'message_seq'])
      .where('campaign_id', '=', Number(ticket))
      .orderBy('message_seq')
      .execute()
      .then((rows) => rows.map((r) => r.code));

  it("GET /statistics/daily counts the caller's messages per Paris day by outcome, every day present, oldest first", async () => {
    const a = await h().account({ credits: 10_000 });
    const b = await h().account({ credits: 10_000 });

    // 27 March: two delivered, one rejected (failed), one expired.
    h().clock.set(paris('2026-03-27 10:00'));
    const first = numbers(2);
    await deliver(await send(h(), a, [...first.ok, first.rejected, first.expired]));
    // 29 March 00:30 in Paris is still 28 March in UTC: it counts on the 29th.
    h().clock.set(paris('2026-03-29 00:30'));
    await deliver(await send(h(), a, numbers(1).ok));
    // 29 March 23:30 (summer time, 21:30 UTC) is the 29th; 30 March 00:30 (22:30 UTC on the 29th) the 30th.
    h().clock.set(paris('2026-03-29 23:30'));
    await deliver(await send(h(), a, numbers(2).ok));
    h().clock.set(paris('2026-03-30 00:30'));
    await deliver(await send(h(), a, numbers(3).ok));
    // Today, 31 March: three queued and not yet taken (pending), and a campaign for tonight cancelled.
    h().clock.set(paris('2026-03-31 09:00'));
    await send(h(), a, numbers(3).ok);
    const tonight = await send(h(), a, numbers(2).ok, { delay: '2026-03-31 21:00:00' });
    expect((await call(h().app, 'DELETE', `/send/${tonight}`, { token: a.token })).body.status).toBe(1);
    // Account B's messages are B's alone.
    await send(h(), b, numbers(4).ok);

    const zero = { sent: 0, delivered: 0, failed: 0, expired: 0, pending: 0, cancelled: 0 };
    const body = await read(h(), a, '/statistics/daily?days=5');
    expect(body).toEqual({
      status: 1,
      message: 'OK',
      days: [
        { date: '2026-03-27', ...zero, sent: 4, delivered: 2, failed: 1, expired: 1 },
        { date: '2026-03-28', ...zero },
        { date: '2026-03-29', ...zero, sent: 3, delivered: 3 },
        { date: '2026-03-30', ...zero, sent: 3, delivered: 3 },
        { date: '2026-03-31', ...zero, sent: 3, pending: 3, cancelled: 2 },
      ],
    });

    // 30 days by default, ending today; B sees its own four pending messages only.
    const byDefault = await read(h(), a, '/statistics/daily');
    expect(byDefault.days).toHaveLength(30);
    expect(byDefault.days[0].date).toBe('2026-03-02');
    expect(byDefault.days.at(-1).date).toBe('2026-03-31');
    expect(byDefault.days.slice(-5)).toEqual(body.days);
    const ofB = await read(h(), b, '/statistics/daily?days=90');
    expect(ofB.days).toHaveLength(90);
    expect(ofB.days.filter((d: { sent: number }) => d.sent > 0)).toEqual([
      { date: '2026-03-31', ...zero, sent: 4, pending: 4 },
    ]);

    // A day later, yesterday's pending messages are still pending: a message counts on the day it was due.
    h().clock.set(paris('2026-04-01 08:00'));
    const later = await read(h(), a, '/statistics/daily?days=2');
    expect(later.days).toEqual([
      { date: '2026-03-31', ...zero, sent: 3, pending: 3, cancelled: 2 },
      { date: '2026-04-01', ...zero },
    ]);
  });

  it('GET /statistics/daily refuses a number of days outside 1 to 90 with -7 naming days', async () => {
    const a = await h().account();
    for (const days of ['0', '91', 'abc', '-3', '1.5']) {
      const r = await get(h(), a, `/statistics/daily?days=${days}`);
      expect({ days, status: r.body.status }).toEqual({ days, status: -7 });
      expect(r.body.details).toContain(`days "${days}"`);
      expect(r.body.details).toContain('from 1 to 90');
    }
    expect((await get(h(), a, '/statistics/daily?days=1')).body.days).toHaveLength(1);
  });

  it('GET /campaign/:ticket/clicks buckets clicks per Paris hour or day with distinct recipients, oldest first', async () => {
    const a = await h().account();
    h().clock.set(paris('2026-03-28 09:00'));
    const n = numbers(3);
    const ticket = await send(h(), a, n.ok, { links: ['https://shop.example/track'] });
    const [c0, c1, c2] = await codesOf(ticket);

    // Hour 10 of the 28th: three clicks by two recipients.
    await click(c0, paris('2026-03-28 10:05'));
    await click(c0, paris('2026-03-28 10:40'));
    await click(c1, paris('2026-03-28 10:50'));
    // 00:30 on the 29th in Paris (23:30 UTC on the 28th), then 09:15 after the change to summer time.
    await click(c2, paris('2026-03-29 00:30'));
    await click(c0, paris('2026-03-29 09:15'));

    // Not counted yet by the fold: the chart reads the stored clicks.
    const hours = await read(h(), a, `/campaign/${ticket}/clicks`);
    expect(hours).toEqual({
      status: 1,
      message: 'OK',
      clicks: [
        { date: '2026-03-28 10:00:00', clicks: 3, unique: 2 },
        { date: '2026-03-29 00:00:00', clicks: 1, unique: 1 },
        { date: '2026-03-29 09:00:00', clicks: 1, unique: 1 },
      ],
    });
    expect(await read(h(), a, `/campaign/${ticket}/clicks?bucket=hour`)).toEqual(hours);
    expect((await read(h(), a, `/campaign/${ticket}/clicks?bucket=day`)).clicks).toEqual([
      { date: '2026-03-28 00:00:00', clicks: 3, unique: 2 },
      { date: '2026-03-29 00:00:00', clicks: 2, unique: 2 },
    ]);

    // A campaign without clicks has none to chart.
    const quiet = await send(h(), a, numbers(1).ok, { links: ['https://shop.example/quiet'] });
    expect((await get(h(), a, `/campaign/${quiet}/clicks`)).body).toEqual({
      status: 1,
      message: 'OK',
      clicks: [],
    });

    const bad = await get(h(), a, `/campaign/${ticket}/clicks?bucket=week`);
    expect(bad.body.status).toBe(-7);
    expect(bad.body.details).toContain('bucket "week"');
  });

  it('GET /campaign/:ticket/clicks forgets the clicks the pruning job deleted (PRUNE_CLICKS_AFTER)', async () => {
    const a = await h().account();
    h().clock.set(paris('2026-03-01 09:00'));
    const ticket = await send(h(), a, numbers(1).ok, { links: ['https://shop.example/old'] });
    const [code] = await codesOf(ticket);
    await click(code, paris('2026-03-01 10:00'));
    await click(code, paris('2026-04-05 10:00'));
    await h().deps.services.clickFold.foldClicks(1000);
    const before = await read(h(), a, `/campaign/${ticket}/clicks?bucket=day`);
    expect(before.clicks.map((c: { date: string }) => c.date)).toEqual([
      '2026-03-01 00:00:00',
      '2026-04-05 00:00:00',
    ]);
    // 30 days on, the first click is pruned; the campaign's own counter still has it.
    await h().deps.services.links.pruneFoldedClicks(paris('2026-03-15 00:00'), 1000);
    expect((await read(h(), a, `/campaign/${ticket}/clicks?bucket=day`)).clicks).toEqual([
      { date: '2026-04-05 00:00:00', clicks: 1, unique: 1 },
    ]);
    expect((await get(h(), a, `/campaign/${ticket}`)).body.campaign[0].clicks).toBe(2);
  });

  it('GET /campaign/:ticket/messages pages the messages in send order with status, dates and clicks', async () => {
    const a = await h().account();
    h().clock.set(paris('2026-03-28 09:00'));
    const n = numbers(3);
    const recipients = [...n.ok, n.rejected, n.expired];
    const ticket = await send(h(), a, recipients, { links: ['https://shop.example/track'] });

    // Before the worker: every message reports 1, due now, neither sent nor final.
    const queued = await read(h(), a, `/campaign/${ticket}/messages?length=2`);
    expect(queued).toMatchObject({ totalRecords: 5, totalDisplayRecords: 5 });
    expect(queued.messages).toEqual([
      {
        id: expect.stringMatching(/^\d+$/),
        destination: n.ok[0],
        gsmsmsid: 'g0',
        status: 1,
        date: '2026-03-28 09:00:00',
        sent_date: null,
        delivery_date: null,
        clicks: 0,
      },
      expect.objectContaining({ destination: n.ok[1], gsmsmsid: 'g1', status: 1 }),
    ]);

    h().clock.set(paris('2026-03-28 09:01'));
    await deliver(ticket);
    const codes = await codesOf(ticket);
    await click(codes[0], paris('2026-03-28 10:00'));
    await click(codes[0], paris('2026-03-28 10:01'));
    await click(codes[3], paris('2026-03-28 10:02'));
    await h().deps.services.clickFold.foldClicks(1000);

    const all = await read(h(), a, `/campaign/${ticket}/messages`);
    expect(all.totalRecords).toBe(5);
    expect(all.totalDisplayRecords).toBe(5);
    expect(all.messages.map((m: { destination: string }) => m.destination)).toEqual(recipients);
    expect(all.messages.map((m: { status: number }) => m.status)).toEqual([3, 3, 3, 9, 12]);
    expect(all.messages.map((m: { clicks: number }) => m.clicks)).toEqual([2, 0, 0, 1, 0]);
    for (const m of all.messages) {
      expect(m).toMatchObject({
        date: '2026-03-28 09:00:00',
        sent_date: '2026-03-28 09:01:00',
        delivery_date: '2026-03-28 09:01:00',
      });
    }
    // Ids are the messages' own, distinct and rising with the send order.
    const ids = all.messages.map((m: { id: string }) => Number(m.id));
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(ids).size).toBe(5);

    // A status keeps those reporting it; totalRecords still counts them all; paging is in send order.
    const delivered = await read(h(), a, `/campaign/${ticket}/messages?status=3&start=1&length=1`);
    expect(delivered).toMatchObject({ totalRecords: 5, totalDisplayRecords: 3 });
    expect(delivered.messages.map((m: { destination: string }) => m.destination)).toEqual([n.ok[1]]);
    const rejected = await read(h(), a, `/campaign/${ticket}/messages?status=9`);
    expect(rejected).toMatchObject({ totalRecords: 5, totalDisplayRecords: 1 });
    expect(rejected.messages).toEqual([expect.objectContaining({ destination: n.rejected, clicks: 1 })]);
    const none = await get(h(), a, `/campaign/${ticket}/messages?status=2`);
    expect(none.body).toMatchObject({ status: 1, messages: [], totalRecords: 5, totalDisplayRecords: 0 });
    const past = await get(h(), a, `/campaign/${ticket}/messages?start=5`);
    expect(past.body).toMatchObject({ status: 1, messages: [], totalRecords: 5, totalDisplayRecords: 5 });
  });

  it('GET /campaign/:ticket/messages takes at most 500 a page and a DLR code as status, else -7', async () => {
    const a = await h().account();
    const ticket = await send(h(), a, numbers(1).ok);
    expect((await get(h(), a, `/campaign/${ticket}/messages?length=500`)).body.status).toBe(1);
    for (const [query, field] of [
      ['length=501', 'length "501"'],
      ['length=0', 'length "0"'],
      ['start=-1', 'start "-1"'],
      ['status=8', 'status "8"'],
      ['status=delivered', 'status "delivered"'],
    ]) {
      const r = await get(h(), a, `/campaign/${ticket}/messages?${query}`);
      expect({ query, status: r.body.status }).toEqual({ query, status: -7 });
      expect(r.body.details).toContain(field);
    }
  });

  it("a token of account B gets -5 for account A's campaign on both reads, as for an unknown one", async () => {
    const a = await h().account();
    const b = await h().account();
    const ticket = await send(h(), a, numbers(1).ok, { links: ['https://shop.example/a'] });
    const [code] = await codesOf(ticket);
    await click(code, h().clock.now());
    for (const url of [
      `/campaign/${ticket}/messages`,
      `/campaign/${ticket}/clicks`,
      '/campaign/999999999/messages',
      '/campaign/999999999/clicks',
      '/campaign/abc/clicks',
    ]) {
      for (const accept of [undefined, 'application/xml']) {
        const r = await get(h(), b, url, accept);
        expect({ url, accept, status: String(r.body.status) }).toEqual({ url, accept, status: '-5' });
        expect(r.body.details).toContain('not found');
      }
    }
    // A itself reads both.
    expect((await get(h(), a, `/campaign/${ticket}/messages`)).body.messages).toHaveLength(1);
    expect((await get(h(), a, `/campaign/${ticket}/clicks`)).body.clicks).toHaveLength(1);
  });
});
