// The link server over real loopback HTTP: redirects, what counts as a click, what a click stores, and
// that no input brings it down.
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickFold, createClickFold } from '../../src/links/click-fold.ts';
import { closeLinkServer, createLinkServer } from '../../src/links/link-server.ts';
import { linksRepo, type NewClick, type NewLink } from '../../src/links/links.repo.ts';
import { createLinksService, type LinksService } from '../../src/links/links.service.ts';
import {
  availableDialects,
  call,
  createHarness,
  describeEachDialect,
  type Harness,
} from '../helpers/harness.ts';

const browser =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function get(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
) {
  return new Promise<Reply>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Sends raw bytes and returns the status line of the answer (or '' if the server closed without one). */
function raw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(data.split('\r\n')[0]));
    socket.on('error', reject);
    socket.write(bytes);
    socket.end();
  });
}

interface LoggedError {
  fields: Record<string, unknown>;
  msg: string;
}

function captureLogger(into: LoggedError[]): Logger {
  const log = (fields: Record<string, unknown>, msg: string) => into.push({ fields, msg });
  return { error: log, warn: log } as unknown as Logger;
}

describeEachDialect('short links', (h) => {
  let server: Server;
  let port: number;
  let proxied: Server;
  let proxiedPort: number;
  let links: LinksService;
  let clickFold: ClickFold;
  const logged: LoggedError[] = [];
  let campaignCounter = 5000;

  const listen = async (s: Server): Promise<number> => {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return (s.address() as AddressInfo).port;
  };

  beforeAll(async () => {
    const { deps } = h();
    // The server's own links service, on the harness database, with a logger the tests can read.
    links = createLinksService({
      db: deps.store.db,
      clock: h().clock,
      logger: captureLogger(logged),
      baseUrl: deps.config.LINK_BASE_URL,
      codeLength: deps.config.SHORT_CODE_LENGTH,
    });
    clickFold = createClickFold({
      db: deps.store.db,
      dialect: deps.store.dialect,
      clock: h().clock,
      timezone: deps.config.TIMEZONE,
      links,
    });
    const logger = captureLogger(logged);
    server = createLinkServer({ config: { TRUST_PROXY: 'false' }, logger, services: { links } });
    port = await listen(server);
    proxied = createLinkServer({ config: { TRUST_PROXY: 'true' }, logger, services: { links } });
    proxiedPort = await listen(proxied);
  });

  afterAll(async () => {
    await closeLinkServer(server, links);
    await closeLinkServer(proxied, links);
  });

  /**
   * Stores `count` links of one fake campaign through the links service, as the campaigns code does, each
   * with the CLICKER context `context(seq)` (by default a recipient given by number, without gsmsmsid).
   */
  async function makeLinks(
    harness: Harness,
    count: number,
    longUrl = 'https://shop.example.com/offer?id=7',
    context: (seq: number) => Pick<NewLink, 'gsmsmsid' | 'contact'> = () => ({
      gsmsmsid: null,
      contact: null,
    }),
  ) {
    const account = await harness.account();
    const campaignId = ++campaignCounter;
    const allocated = harness.deps.services.links.allocate(count);
    await harness.deps.services.links.store(
      harness.deps.store.db,
      allocated.map((a, seq) => ({
        code: a.code,
        campaign_id: campaignId,
        message_seq: seq,
        account_id: account.id,
        long_url: longUrl,
        ...context(seq),
      })),
    );
    return { accountId: account.id, campaignId, codes: allocated.map((a) => a.code), urls: allocated };
  }

  const clicksOf = (code: string) =>
    h()
      .deps.store.db.selectFrom('clicks')
      .innerJoin('links', 'links.id', 'clicks.link_id')
      .selectAll('clicks')
      .where('links.code', '=', code)
      .orderBy('clicks.id')
      .execute();

  /** Counters and CLICKER events come from the fold; the server process runs it shortly after clicks. */
  const fold = () => clickFold.foldClicks(1000);

  const counterOf = async (code: string) => {
    await fold();
    const link = await h()
      .deps.store.db.selectFrom('links')
      .select('clicks')
      .where('code', '=', code)
      .executeTakeFirstOrThrow();
    return link.clicks;
  };

  it('a short link answers 302 to its long URL, uncacheable, and the short URL names this server', async () => {
    const { codes, urls } = await makeLinks(h(), 1, 'https://shop.example.com/offer?id=7&utm_source=sms');
    expect(urls[0].url).toBe(`${h().config.LINK_BASE_URL}/${codes[0]}`);
    const r = await get(port, `/${codes[0]}`, { headers: { 'user-agent': browser } });
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('https://shop.example.com/offer?id=7&utm_source=sms');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(await counterOf(codes[0])).toBe(1);
  });

  it('end to end: a recipient of POST /send follows the short URL in their SMS, and the click is theirs', async () => {
    const a = await h().account({ credits: 100 });
    const sent = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Sale! <-short->', links: ['https://shop.example/sale?c=1'] },
          recipients: { gsm: [{ value: '33612345601' }, { value: '33612345602', gsmsmsid: 'mine-2' }] },
        },
      },
    });
    expect(sent.body).toMatchObject({ status: 1, sent: 2 });
    const ticket = Number(sent.body.ticket);
    const messages = await h()
      .deps.store.db.selectFrom('messages')
      .select(['seq', 'text', 'recipient'])
      .where('campaign_id', '=', ticket)
      .orderBy('seq')
      .execute();
    const second = messages.find((m) => m.recipient === '33612345602')!;
    const shortUrl = second.text.match(/(https?:\/\/\S+)$/)![1];
    expect(shortUrl.startsWith(`${h().config.LINK_BASE_URL}/`)).toBe(true);
    const path = new URL(shortUrl).pathname;
    h().clock.set(Date.UTC(2026, 0, 6, 12, 0, 0));
    const r = await get(port, path, { headers: { 'user-agent': browser } });
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('https://shop.example/sale?c=1');
    const [click] = await clicksOf(path.slice(1));
    expect(click).toMatchObject({
      campaign_id: ticket,
      account_id: a.id,
      message_seq: second.seq,
      clicked_at: Date.UTC(2026, 0, 6, 12, 0, 0),
    });
  });

  it('each counted click writes a CLICKER event: gsmsmsid, contact fields, device, short URL, clicks on the link', async () => {
    const a = await h().account();
    const list = await call(h().app, 'POST', '/list', {
      token: a.token,
      json: {
        list: { name: 'vip', contacts: { gsm: [{ value: '33612345611', info1: 'Ada', info2: 'Paris' }] } },
      },
    });
    const sent = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Hi [info1]: <-short->', pushtype: 'alert', links: ['https://shop.example/vip'] },
          lists: [{ value: list.body.id }],
        },
      },
    });
    expect(sent.body, sent.body.details).toMatchObject({ status: 1, sent: 1 });
    const ticket = Number(sent.body.ticket);
    const [message] = await h()
      .deps.store.db.selectFrom('messages')
      .select(['text'])
      .where('campaign_id', '=', ticket)
      .execute();
    const shortUrl = message.text.match(/(https?:\/\/\S+)$/)![1];
    const path = new URL(shortUrl).pathname;
    h().clock.set(Date.UTC(2026, 6, 14, 10, 30, 5)); // 12:30:05 in Paris (summer time)
    const iphone =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
    await get(port, path, { headers: { 'user-agent': iphone } });
    await get(port, path, { method: 'HEAD', headers: { 'user-agent': iphone } });
    await get(port, path, { headers: { 'user-agent': 'facebookexternalhit/1.1' } });
    await get(port, path, { headers: { 'user-agent': browser } });
    await fold();
    const events = await h()
      .deps.store.db.selectFrom('events')
      .select(['type', 'campaign_id', 'payload'])
      .where('account_id', '=', a.id)
      .where('type', '=', 'CLICKER')
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.campaign_id)).toEqual([ticket, ticket]);
    expect(JSON.parse(events[0].payload)).toEqual({
      campaign_id: String(ticket),
      gsmsid: '',
      date: '2026-07-14 12:30:05',
      long_url: 'https://shop.example/vip',
      short_url: shortUrl,
      brand: 'Apple',
      model: 'iPhone',
      os: 'iOS 17.0',
      info1: 'Ada',
      info2: 'Paris',
      info3: '',
      info4: '',
      clicks_on_link: 1,
    });
    expect(JSON.parse(events[1].payload)).toMatchObject({
      brand: 'Google',
      model: 'Pixel 8',
      os: 'Android 14',
      clicks_on_link: 2,
    });

    const single = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Track: <-short->', pushtype: 'alert', links: ['https://shop.example/track'] },
          recipients: { gsm: [{ value: '33612345612', gsmsmsid: 'parcel-9' }] },
        },
      },
    });
    const [tracked] = await h()
      .deps.store.db.selectFrom('messages')
      .select(['text'])
      .where('campaign_id', '=', Number(single.body.ticket))
      .execute();
    await get(port, new URL(tracked.text.match(/(https?:\/\/\S+)$/)![1]).pathname, {
      headers: { 'user-agent': browser },
    });
    await fold();
    const last = await h()
      .deps.store.db.selectFrom('events')
      .select('payload')
      .where('account_id', '=', a.id)
      .where('type', '=', 'CLICKER')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(last.payload)).toMatchObject({
      gsmsid: 'parcel-9',
      campaign_id: single.body.ticket,
      clicks_on_link: 1,
    });
  });

  it('a CLICKER event tells the recipient context stored with the link, whatever its message and contact rows say later', async () => {
    const { codes, accountId } = await makeLinks(h(), 2, 'https://shop.example/ctx', (seq) =>
      seq === 0
        ? { gsmsmsid: 'ctx-0', contact: null }
        : { gsmsmsid: null, contact: { info1: 'Zoé', info2: null, info3: 'x"y', info4: 'z' } },
    );
    // No message or contact row exists for these links: the context is the link's own.
    for (const code of codes) await get(port, `/${code}`, { headers: { 'user-agent': browser } });
    await fold();
    const events = await h()
      .deps.store.db.selectFrom('events')
      .select('payload')
      .where('account_id', '=', accountId)
      .where('type', '=', 'CLICKER')
      .orderBy('id')
      .execute();
    const told = events.map((e) => {
      const { gsmsid, info1, info2, info3, info4 } = JSON.parse(e.payload);
      return { gsmsid, info1, info2, info3, info4 };
    });
    expect(told).toEqual([
      { gsmsid: 'ctx-0', info1: '', info2: '', info3: '', info4: '' },
      { gsmsid: '', info1: 'Zoé', info2: '', info3: 'x"y', info4: 'z' },
    ]);

    // A list send: the contact edited afterwards does not change what the link's events say.
    const a = await h().account();
    const list = await call(h().app, 'POST', '/list', {
      token: a.token,
      json: { list: { name: 'ctx', contacts: { gsm: [{ value: '33612345631', info1: 'Before' }] } } },
    });
    const sent = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Hi <-short->', links: ['https://x.example'] },
          lists: [{ value: list.body.id }],
        },
      },
    });
    expect(sent.body).toMatchObject({ status: 1, sent: 1 });
    const db = h().deps.store.db;
    await db.updateTable('contacts').set({ info1: 'After' }).where('account_id', '=', a.id).execute();
    await db.updateTable('messages').set({ gsmsmsid: 'after' }).where('account_id', '=', a.id).execute();
    const [link] = await db.selectFrom('links').select('code').where('account_id', '=', a.id).execute();
    await get(port, `/${link.code}`, { headers: { 'user-agent': browser } });
    await fold();
    const [event] = await db
      .selectFrom('events')
      .select('payload')
      .where('account_id', '=', a.id)
      .where('type', '=', 'CLICKER')
      .execute();
    expect(JSON.parse(event.payload)).toMatchObject({ gsmsid: '', info1: 'Before' });
  });

  it('concurrent clicks on one link, committed together, number their CLICKER events 1..n', async () => {
    const a = await h().account({ credits: 100 });
    const sent = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Go: <-short->', links: ['https://shop.example/go'] },
          recipients: { gsm: [{ value: '33612345621', gsmsmsid: 'burst' }] },
        },
      },
    });
    const [message] = await h()
      .deps.store.db.selectFrom('messages')
      .select('text')
      .where('campaign_id', '=', Number(sent.body.ticket))
      .execute();
    const path = new URL(message.text.match(/(https?:\/\/\S+)$/)![1]).pathname;
    await get(port, path, { headers: { 'user-agent': browser } });
    await Promise.all(
      Array.from({ length: 5 }, () => get(port, path, { headers: { 'user-agent': browser } })),
    );
    await fold();
    const events = await h()
      .deps.store.db.selectFrom('events')
      .select('payload')
      .where('account_id', '=', a.id)
      .where('type', '=', 'CLICKER')
      .execute();
    const numbers = events.map((e) => JSON.parse(e.payload).clicks_on_link as number).sort((x, y) => x - y);
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await counterOf(path.slice(1))).toBe(6);
  });

  it('a click stores its recipient, campaign, time from the clock, agent, referer and truncated IPv4', async () => {
    const { codes, campaignId, accountId } = await makeLinks(h(), 3);
    h().clock.set(Date.UTC(2026, 2, 14, 15, 9, 26));
    const r = await get(port, `/${codes[2]}?fbclid=whatever`, {
      headers: { 'user-agent': browser, referer: 'https://mail.example.net/inbox' },
    });
    expect(r.status).toBe(302);
    const rows = await clicksOf(codes[2]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      campaign_id: campaignId,
      account_id: accountId,
      message_seq: 2,
      clicked_at: Date.UTC(2026, 2, 14, 15, 9, 26),
      user_agent: browser,
      referer: 'https://mail.example.net/inbox',
      ip: '127.0.0.0',
    });
  });

  it('X-Forwarded-For is ignored unless the proxy is trusted, and then stored truncated (IPv4 /24, IPv6 /48)', async () => {
    const { codes } = await makeLinks(h(), 3);
    await get(port, `/${codes[0]}`, {
      headers: { 'user-agent': browser, 'x-forwarded-for': '203.0.113.77' },
    });
    await get(proxiedPort, `/${codes[1]}`, {
      // What the client wrote, then what the trusted proxy appended: only the latter is believed.
      headers: { 'user-agent': browser, 'x-forwarded-for': '10.0.0.1, 203.0.113.77' },
    });
    await get(proxiedPort, `/${codes[2]}`, {
      headers: { 'user-agent': browser, 'x-forwarded-for': '2001:db8:abcd:12::99' },
    });
    expect((await clicksOf(codes[0]))[0].ip).toBe('127.0.0.0');
    expect((await clicksOf(codes[1]))[0].ip).toBe('203.0.113.0');
    expect((await clicksOf(codes[2]))[0].ip).toBe('2001:db8:abcd::');
  });

  it('user agent and referer are stored truncated to 512 characters', async () => {
    const { codes } = await makeLinks(h(), 1);
    const longAgent = `${browser} ${'x'.repeat(2000)}`;
    const longReferer = `https://ref.example.com/${'p'.repeat(2000)}`;
    const r = await get(port, `/${codes[0]}`, { headers: { 'user-agent': longAgent, referer: longReferer } });
    expect(r.status).toBe(302);
    const [row] = await clicksOf(codes[0]);
    expect(row.user_agent).toBe(longAgent.slice(0, 512));
    expect(row.referer).toBe(longReferer.slice(0, 512));
  });

  it('an unknown code answers a small 404 page and records nothing', async () => {
    const before = await h()
      .deps.store.db.selectFrom('clicks')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const unknown = 'Z'.repeat(h().config.SHORT_CODE_LENGTH);
    const r = await get(port, `/${unknown}`, { headers: { 'user-agent': browser } });
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.body).toContain('Link not found');
    expect(r.body.length).toBeLessThan(1000);
    const after = await h()
      .deps.store.db.selectFrom('clicks')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('HEAD gets the same redirect but is not counted', async () => {
    const { codes } = await makeLinks(h(), 1);
    const r = await get(port, `/${codes[0]}`, { method: 'HEAD', headers: { 'user-agent': browser } });
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('https://shop.example.com/offer?id=7');
    expect(await clicksOf(codes[0])).toHaveLength(0);
    expect(await counterOf(codes[0])).toBe(0);
  });

  it('link-preview fetchers and prefetches are redirected but not counted; a browser afterwards is', async () => {
    const { codes } = await makeLinks(h(), 1);
    const previews: Record<string, string>[] = [
      { 'user-agent': 'facebookexternalhit/1.1 Facebot Twitterbot/1.0' },
      { 'user-agent': 'WhatsApp/2.23.20.0 A' },
      { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
      { 'user-agent': browser, 'sec-purpose': 'prefetch' },
      {},
    ];
    for (const headers of previews) {
      const r = await get(port, `/${codes[0]}`, { headers });
      expect(r.status).toBe(302);
    }
    expect(await clicksOf(codes[0])).toHaveLength(0);
    await get(port, `/${codes[0]}`, { headers: { 'user-agent': 'curl/8.5.0' } });
    expect(await clicksOf(codes[0])).toHaveLength(1);
    expect(await counterOf(codes[0])).toBe(1);
  });

  it('many concurrent clicks are all recorded, repeated clicks on one link included', async () => {
    const { codes } = await makeLinks(h(), 40);
    const targets = [...codes, codes[0], codes[0], codes[1]];
    const replies = await Promise.all(
      targets.map((code) => get(port, `/${code}`, { headers: { 'user-agent': browser } })),
    );
    expect(replies.every((r) => r.status === 302)).toBe(true);
    const rows = await h()
      .deps.store.db.selectFrom('clicks')
      .innerJoin('links', 'links.id', 'clicks.link_id')
      .select('links.code')
      .where('links.code', 'in', codes)
      .execute();
    expect(rows).toHaveLength(43);
    expect(await counterOf(codes[0])).toBe(3);
    expect(await counterOf(codes[1])).toBe(2);
    expect(await counterOf(codes[39])).toBe(1);
  });

  it('click groups of any size are stored row for row, and folds of any size count them', async () => {
    const { codes } = await makeLinks(h(), 3);
    const db = h().deps.store.db;
    const ids = await db.selectFrom('links').select(['id', 'code']).where('code', 'in', codes).execute();
    const idOf = (code: string) => ids.find((r) => r.code === code)!.id;
    let seq = 1_000_000;
    for (const size of [1, 3, 61, 300, 777]) {
      const clicks: NewClick[] = Array.from({ length: size }, (_, i) => ({
        link_id: idOf(codes[i % 3]),
        campaign_id: 424242,
        account_id: 1,
        message_seq: seq + i,
        clicked_at: seq + i,
        user_agent: `agent ${seq + i}`,
        referer: i % 2 ? null : `https://r.example/${seq + i}`,
        ip: `10.0.${i % 256}.0`,
      }));
      await db.transaction().execute((tx) => linksRepo.insertClicks(tx, clicks));
      const stored = await db
        .selectFrom('clicks')
        .select([
          'link_id',
          'campaign_id',
          'account_id',
          'message_seq',
          'clicked_at',
          'user_agent',
          'referer',
          'ip',
        ])
        .where('campaign_id', '=', 424242)
        .where('message_seq', '>=', seq)
        .where('message_seq', '<', seq + size)
        .orderBy('message_seq')
        .execute();
      expect(stored).toEqual(clicks);
      seq += 10_000;
    }
    // Uneven folds, so that a link's clicks straddle folds.
    while ((await clickFold.foldClicks(97)) > 0);
    const stored = await db
      .selectFrom('clicks')
      .select('link_id')
      .where('campaign_id', '=', 424242)
      .execute();
    expect(stored).toHaveLength(1 + 3 + 61 + 300 + 777);
    for (const code of codes) {
      expect(await counterOf(code)).toBe(stored.filter((c) => c.link_id === idOf(code)).length);
    }
  });

  it('a URL that is not printable ASCII is redirected percent-encoded', async () => {
    const { codes } = await makeLinks(h(), 1, 'https://exemple.fr/été?q=à b');
    const r = await get(port, `/${codes[0]}`, { method: 'HEAD' });
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('https://exemple.fr/%C3%A9t%C3%A9?q=%C3%A0%20b');
  });

  it('GET / says what this server is; other methods get 405', async () => {
    const home = await get(port, '/');
    expect(home.status).toBe(200);
    expect(home.body).toContain('link server');
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PROPFIND']) {
      const r = await get(port, '/', { method });
      expect(r.status).toBe(405);
      expect(r.headers.allow).toBe('GET, HEAD');
    }
  });

  it('bad input never crashes the server and never reaches the database', async () => {
    const { codes } = await makeLinks(h(), 1);
    const length = h().config.SHORT_CODE_LENGTH;
    for (const path of [
      '/%zz',
      `/${'%zz'.repeat(length)}`,
      `/${codes[0].slice(0, -1)}%`,
      `/${codes[0]}/`,
      `/${codes[0]}x`,
      `/${'a'.repeat(length - 1)}-`,
      '/favicon.ico',
      '//',
      `/${'a'.repeat(4000)}`,
    ]) {
      const r = await get(port, path, { headers: { 'user-agent': browser } });
      expect(r.status, path).toBe(404);
    }
    const post = await get(port, `/${codes[0]}`, { method: 'POST', headers: { 'user-agent': browser } });
    expect(post.status).toBe(405);
    expect(await raw(port, `GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 4\d\d/,
    );
    expect(await raw(port, 'NOT-A-METHOD / HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    expect(await raw(port, 'GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 4\d\d/);
    expect(await raw(port, `GET http://evil.test/${codes[0]} HTTP/1.1\r\nHost: x\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 404/,
    );
    expect(await raw(port, Buffer.from([0, 1, 2, 3, 13, 10, 13, 10]))).toMatch(/^HTTP\/1\.1 400|^$/);
    expect(await clicksOf(codes[0])).toHaveLength(0);
    const after = await get(port, `/${codes[0]}`, { headers: { 'user-agent': browser } });
    expect(after.status).toBe(302);
  });

  it('a failed click write still redirects, after the attempt, and is logged; the counter is not moved', async () => {
    const { codes } = await makeLinks(h(), 1);
    const db = h().deps.store.db;
    const first = await get(port, `/${codes[0]}`, { headers: { 'user-agent': browser } });
    expect(first.status).toBe(302);
    logged.length = 0;
    await db.schema.alterTable('clicks').renameTo('clicks_away').execute();
    try {
      const r = await get(port, `/${codes[0]}`, { headers: { 'user-agent': browser } });
      expect(r.status).toBe(302);
      expect(r.headers.location).toBe('https://shop.example.com/offer?id=7');
      // The log line exists as soon as the answer does: the redirect waited for the failed attempt.
      expect(logged.map((l) => l.msg)).toContain('clicks lost: recording failed');
      expect(logged[0].fields.clicks).toBe(1);
    } finally {
      await db.schema.alterTable('clicks_away').renameTo('clicks').execute();
    }
    expect(await counterOf(codes[0])).toBe(1);
    expect(await clicksOf(codes[0])).toHaveLength(1);
  });

  it('a database failure while looking up a code answers 503 and is logged', async () => {
    const { codes } = await makeLinks(h(), 1);
    const db = h().deps.store.db;
    logged.length = 0;
    await db.schema.alterTable('links').renameTo('links_away').execute();
    try {
      const r = await get(port, `/${codes[0]}`, { headers: { 'user-agent': browser } });
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('5');
      expect(logged.map((l) => l.msg)).toContain('link lookup failed');
    } finally {
      await db.schema.alterTable('links_away').renameTo('links').execute();
    }
    const again = await get(port, `/${codes[0]}`, { headers: { 'user-agent': browser } });
    expect(again.status).toBe(302);
  });
});

// On SQLite a write runs synchronously on the event loop, so a response can never overtake it; on
// PostgreSQL it is a network round trip, and a lock can hold it back to show the answer waits for it.
describe.runIf(availableDialects().includes('postgres'))(
  'short links [postgres]: answer after commit',
  () => {
    let h: Harness;
    let server: Server;
    let port: number;

    beforeAll(async () => {
      h = await createHarness('postgres');
      server = createLinkServer(h.deps);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterAll(async () => {
      await closeLinkServer(server, h.deps.services.links);
      await h.close();
    });

    it('a click is not answered while its write is blocked, and is answered once it commits', async () => {
      const account = await h.account();
      const [link] = h.deps.services.links.allocate(1);
      await h.deps.services.links.store(h.deps.store.db, [
        {
          code: link.code,
          campaign_id: 77,
          message_seq: 0,
          account_id: account.id,
          long_url: 'https://x.example/',
          gsmsmsid: null,
          contact: null,
        },
      ]);
      const db = h.deps.store.db;
      let answered = false;
      let reply: Promise<Reply> | undefined;
      await db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await sql`lock table clicks in exclusive mode`.execute(conn);
        reply = get(port, `/${link.code}`, { headers: { 'user-agent': browser } }).then((r) => {
          answered = true;
          return r;
        });
        // Wait until the click's INSERT is queued behind the lock.
        for (;;) {
          const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_locks l
          join pg_class c on c.oid = l.relation where c.relname = 'clicks' and not l.granted`.execute(conn);
          if (waiting.rows[0].n > 0) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        expect(answered).toBe(false);
        await sql`commit`.execute(conn);
      });
      const r = await reply!;
      expect(r.status).toBe(302);
      const rows = await db
        .selectFrom('clicks')
        .innerJoin('links', 'links.id', 'clicks.link_id')
        .select('clicks.id')
        .where('links.code', '=', link.code)
        .execute();
      expect(rows).toHaveLength(1);
    });
  },
);
