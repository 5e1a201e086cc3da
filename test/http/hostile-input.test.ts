// What a hostile probe found, each answered now: the envelope with a precise -7 (never a 500) for objects
// and out-of-range numbers, a bound on the parts of one message, bodies refused before they are read (too
// large, unauthenticated, XML over its limit, more large ones than the server reads at once), a deadline on
// slow headers and slow bodies, and a wrong Content-Type sniffed rather than refused.
import { connect, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { type Config, ConfigError, loadConfig } from '../../src/config.ts';
import { buildParts } from '../../src/delivery/outbound-parts.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { call, describeEachDialect, type Harness } from '../helpers/harness.ts';

const number = '33612345678';
const sms = (message: Record<string, unknown>) => ({
  sms: { message: { text: 'Hello', ...message }, recipients: { gsm: [{ value: number }] } },
});
const wallTime = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

/** A raw HTTP exchange on a socket: what was written, and every byte the server answered until it closed. */
interface Exchange {
  socket: Socket;
  written: number;
  /** Resolves with the answer so far once it holds a whole head (and `Content-Length` bytes of body). */
  answered: Promise<string>;
  /** Resolves with the whole answer when the server closes the connection. */
  closed: Promise<string>;
}

/** Fails a wait that a broken server would make endless; never a sleep: it only bounds the wait. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** Every socket a test opened, destroyed after it: a server that never answers must not hold its close. */
const sockets: Socket[] = [];

async function open(port: number): Promise<Exchange> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  let onAnswer: (text: string) => void = () => {};
  const answered = new Promise<string>((resolve) => {
    onAnswer = resolve;
  });
  const closed = new Promise<string>((resolve) => {
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd));
      if (!length || Buffer.byteLength(text.slice(headEnd + 4)) >= Number(length[1])) onAnswer(text);
    });
    socket.on('close', () => {
      onAnswer(text);
      resolve(text);
    });
    // The server may close while the client still writes: that is the point of several tests.
    socket.on('error', () => {});
  });
  const exchange: Exchange = { socket, written: 0, answered, closed };
  return exchange;
}

function write(exchange: Exchange, data: string | Buffer): void {
  exchange.written += Buffer.byteLength(data);
  exchange.socket.write(data);
}

/** The status line and the parsed JSON envelope of a raw answer. */
function parseAnswer(raw: string): { statusLine: string; headers: string; body: unknown } {
  const headEnd = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, headEnd);
  const text = raw.slice(headEnd + 4);
  return {
    statusLine: head.split('\r\n')[0],
    headers: head.toLowerCase(),
    body: text === '' ? undefined : JSON.parse(text),
  };
}

describeEachDialect('hostile input', (h) => {
  const listening: App[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    for (const app of listening.splice(0)) await app.close();
  });

  /** A second API over the harness's services, listening on a free port, with these limits. */
  async function serve(overrides: Partial<Config>): Promise<number> {
    const harness: Harness = h();
    const app = buildApi({
      config: { ...harness.config, ...overrides },
      logger: harness.deps.logger,
      services: harness.deps.services,
    });
    listening.push(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return address.port;
  }

  // 1. Objects and out-of-range numbers.

  it('an object, an array or a boolean as sms.message.unicode is a -7 naming the field, on every send', async () => {
    const a = await h().account();
    const cases: [unknown, string][] = [
      [{ toString: 1 }, 'an object'],
      [{}, 'an object'],
      [[1], 'an array'],
      [true, 'a boolean'],
    ];
    const list = await call(h().app, 'POST', '/list', {
      token: a.token,
      json: { list: { name: 'hostile', contacts: { gsm: [{ value: number }] } } },
    });
    for (const [unicode, kind] of cases) {
      for (const path of ['/send', '/send/simulate']) {
        const r = await call(h().app, 'POST', path, { token: a.token, json: sms({ unicode }) });
        expect(r.httpCode, path).toBe(200);
        expect(r.body).toEqual({
          status: -7,
          message: 'Data error',
          details: `sms.message.unicode must be a string or a number, not ${kind}`,
        });
      }
      for (const path of ['/send/lists', '/send/lists/simulate']) {
        const r = await call(h().app, 'POST', path, {
          token: a.token,
          json: { sms: { message: { text: 'Hello', unicode }, lists: [{ value: list.body.id }] } },
        });
        expect(r.body, path).toMatchObject({
          status: -7,
          details: expect.stringMatching(/^sms\.message\.unicode/),
        });
      }
    }
    const xml = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      xml: `<sms><message><text>Hi</text><unicode><a>1</a></unicode></message><recipients><gsm>${number}</gsm></recipients></sms>`,
    });
    expect(xml.body).toMatchObject({
      status: '-7',
      details: 'sms.message.unicode must be a string or a number, not an object',
    });
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(1000);
  });

  it('paging: start and length out of range are a -7 on every paged read, a start past the largest exact number too', async () => {
    const a = await h().account();
    const sent = await call(h().app, 'POST', '/send', { token: a.token, json: sms({}) });
    const list = await call(h().app, 'POST', '/list', {
      token: a.token,
      json: { list: { name: 'paged', contacts: { gsm: [{ value: number }] } } },
    });
    const hook = await call(h().app, 'POST', '/webhook', {
      token: a.token,
      json: { webhook: { type: 'MO', url: 'https://hooks.example.com/mo' } },
    });
    const paths = [
      '/campaigns',
      `/campaign/${sent.body.ticket}/mo`,
      `/campaign/${sent.body.ticket}/blacklist`,
      `/campaign/${sent.body.ticket}/npai`,
      '/messages',
      '/messages/mo',
      '/blacklist',
      '/npai',
      `/list/${list.body.id}`,
      '/account/invoice',
      `/webhook/${hook.body.webhook.webhook_id}/deliveries`,
    ];
    for (const path of paths) {
      for (const start of ['1e300', '-1', '1.5', '0x10']) {
        const r = await call(h().app, 'GET', `${path}?start=${start}`, { token: a.token });
        expect(r.body, `${path} start=${start}`).toEqual({
          status: -7,
          message: 'Data error',
          details: `start "${start}" must be a whole number ≥ 0`,
        });
      }
      for (const length of ['99999999999999999999', '1e300', '0', '-5']) {
        const r = await call(h().app, 'GET', `${path}?length=${length}`, { token: a.token });
        expect(r.body, `${path} length=${length}`).toEqual({
          status: -7,
          message: 'Data error',
          details: `length "${length}" must be a whole number from 1 to 1000`,
        });
      }
      for (const start of ['99999999999999999999', '9007199254740992']) {
        const r = await call(h().app, 'GET', `${path}?start=${start}`, { token: a.token });
        expect(r.httpCode, `${path} start=${start}`).toBe(200);
        expect(r.body, `${path} start=${start}`).toEqual({
          status: -7,
          message: 'Data error',
          details: `start "${start}" is past the largest offset a page may start at, 9007199254740991`,
        });
      }
      const last = await call(h().app, 'GET', `${path}?start=9007199254740991`, { token: a.token });
      expect(last.body.status, `${path} start=9007199254740991`).toBe(1);
    }
  });

  it('paging: the largest start is an empty page and one past it a -7 on /campaigns, /blacklist and /campaign/:id/mo', async () => {
    const a = await h().account();
    const sent = await call(h().app, 'POST', '/send', { token: a.token, json: sms({}) });
    await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: '33612345679' }] } } },
    });
    const reads: [string, string][] = [
      ['/campaigns', 'campaigns'],
      ['/blacklist', 'list'],
      [`/campaign/${sent.body.ticket}/mo`, 'replies'],
    ];
    for (const [path, rows] of reads) {
      const first = await call(h().app, 'GET', path, { token: a.token });
      expect(first.body.status, path).toBe(1);
      const largest = await call(h().app, 'GET', `${path}?start=9007199254740991&length=1000`, {
        token: a.token,
      });
      // Past every row: an empty page, with the same totals as the first page.
      expect(largest.body, path).toMatchObject({
        status: 1,
        [rows]: [],
        totalRecords: first.body.totalRecords,
        totalDisplayRecords: first.body.totalDisplayRecords,
      });
      for (const query of ['start=99999999999999999999', 'start=9007199254740992&length=10']) {
        const past = await call(h().app, 'GET', `${path}?${query}`, { token: a.token });
        expect(past.httpCode, `${path}?${query}`).toBe(200);
        expect(past.body, `${path}?${query}`).toEqual({
          status: -7,
          message: 'Data error',
          details: `start "${query.slice(6).split('&')[0]}" is past the largest offset a page may start at, 9007199254740991`,
        });
      }
      const tooLong = await call(h().app, 'GET', `${path}?length=1001`, { token: a.token });
      expect(tooLong.body, `${path}?length=1001`).toEqual({
        status: -7,
        message: 'Data error',
        details: 'length "1001" must be a whole number from 1 to 1000',
      });
    }
    expect((await call(h().app, 'GET', '/campaigns', { token: a.token })).body.totalRecords).toBe(1);
    expect((await call(h().app, 'GET', '/blacklist', { token: a.token })).body.totalRecords).toBe(1);
  });

  it('sms_min and sms_max beyond any count filter as the largest count does, on both databases (no 500)', async () => {
    const a = await h().account();
    await call(h().app, 'POST', '/send', { token: a.token, json: sms({}) });
    for (const value of ['99999999999999999999', '9007199254740993', '2147483648']) {
      const max = await call(h().app, 'GET', `/campaigns?sms_max=${value}`, { token: a.token });
      expect(max.body).toMatchObject({ status: 1, totalDisplayRecords: 1 });
      const min = await call(h().app, 'GET', `/campaigns?sms_min=${value}`, { token: a.token });
      expect(min.body).toMatchObject({ status: 1, totalDisplayRecords: 0 });
    }
    const refused = await call(h().app, 'GET', '/campaigns?sms_min=1e300', { token: a.token });
    expect(refused.body).toMatchObject({ status: -7, details: 'sms_min "1e300" must be a whole number ≥ 0' });
  });

  it('a token ttl beyond ten years is a -7, and GET /token and /token/:id always answer dates', async () => {
    const a = await h().account();
    for (const ttl of [1e300, 1e20, '1e300', 9007199254740991, 315_360_001, 0, -1]) {
      for (const path of ['/token', `/token/account/${a.id}`]) {
        const r = await call(h().app, 'POST', path, {
          token: a.token,
          json: { token: { name: 'forever', ttl } },
        });
        expect(r.body, `${path} ttl=${ttl}`).toMatchObject({
          status: -7,
          details: expect.stringMatching(
            /^token\.ttl ".*" must be a whole number of seconds from 1 to 315360000$/,
          ),
        });
      }
    }
    const longest = await call(h().app, 'POST', '/token', {
      token: a.token,
      json: { token: { name: 'ten years', ttl: 315_360_000 } },
    });
    expect(longest.body.status).toBe(1);
    const all = await call(h().app, 'GET', '/token', { token: a.token });
    expect(all.body.status).toBe(1);
    expect(all.body.tokens.map((t: { name: string }) => t.name)).toEqual(['default', 'ten years']);
    for (const t of all.body.tokens) {
      expect(t.created_at).toMatch(wallTime);
      if (t.expired_at !== null) expect(t.expired_at).toMatch(wallTime);
    }
    const one = await call(h().app, 'GET', `/token/${longest.body.token_id}`, { token: a.token });
    expect(one.body.token).toMatchObject({ ttl: 315_360_000, expired_at: expect.stringMatching(wallTime) });
  });

  // 2. Parts per message.

  it('a text needing more than MAX_PARTS parts is refused with -7 on every send and simulation; MAX_PARTS parts go', async () => {
    const a = await h().account();
    const tooLong = 'a'.repeat(153 * 10 + 1);
    const details =
      'sms.message.text needs 11 SMS parts (1531 GSM-7 characters, 153 per part); a message may have at most 10 (MAX_PARTS)';
    for (const path of ['/send', '/send/simulate']) {
      const r = await call(h().app, 'POST', path, { token: a.token, json: sms({ text: tooLong }) });
      expect(r.body, path).toEqual({ status: -7, message: 'Data error', details });
    }
    for (const path of ['/send', '/send/simulate']) {
      const r = await call(h().app, 'GET', path, { token: a.token, query: { text: tooLong, to: number } });
      expect(r.body, `GET ${path}`).toEqual({ status: -7, message: 'Data error', details });
    }
    const list = await call(h().app, 'POST', '/list', {
      token: a.token,
      json: { list: { name: 'parts', contacts: { gsm: [{ value: number }] } } },
    });
    const byList = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: { sms: { message: { text: tooLong }, lists: [{ value: list.body.id }] } },
    });
    expect(byList.body).toEqual({ status: -7, message: 'Data error', details });
    const ucs2 = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: sms({ text: 'ж'.repeat(67 * 10 + 1) }),
    });
    expect(ucs2.body.details).toBe(
      'sms.message.text needs 11 SMS parts (671 UCS-2 characters, 67 per part); a message may have at most 10 (MAX_PARTS)',
    );
    // Three hundred parts would wrap the one-byte part count of the concatenation header: never stored.
    const huge = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: sms({ text: 'a'.repeat(153 * 300) }),
    });
    expect(huge.body.details).toMatch(/^sms\.message\.text needs 300 SMS parts/);
    expect((await call(h().app, 'GET', '/campaigns', { token: a.token })).body.totalRecords).toBe(0);
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(1000);

    const longest = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: sms({ text: 'a'.repeat(153 * 10) }),
    });
    expect(longest.body).toMatchObject({ status: 1, cost: 10 });
  });

  it('a text its short links push past MAX_PARTS is refused for the recipient it would be sent to', async () => {
    const a = await h().account();
    const r = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: sms({ text: `${'a'.repeat(153 * 10 - 5)} <-short->`, links: ['https://example.com/a'] }),
    });
    expect(r.body).toMatchObject({
      status: -7,
      details: expect.stringMatching(
        new RegExp(
          `^the text for ${number}, its links and fields in place, needs 11 SMS parts \\(\\d+ GSM-7 characters, 153 per part\\); a message may have at most 10 \\(MAX_PARTS\\)$`,
        ),
      ),
    });
  });

  it('MAX_PARTS is at most 255, so the one-byte part count of the concatenation header never wraps', () => {
    expect(() => loadConfig({ MAX_PARTS: '256' })).toThrow(ConfigError);
    expect(loadConfig({ MAX_PARTS: '255' }).MAX_PARTS).toBe(255);
    const parts = buildParts({
      recipient: number,
      sender: null,
      text: 'a'.repeat(153 * 255),
      encoding: 'gsm7',
      ref: 7,
    });
    expect(parts).toHaveLength(255);
    expect(parts.map((p) => p.udh?.[4])).toEqual(parts.map(() => 255));
    expect(parts.map((p) => p.udh?.[5])).toEqual(parts.map((_p, i) => i + 1));
  });

  // 3. Body memory.

  it('an XML body over XML_BODY_LIMIT_BYTES is refused with the envelope before it is parsed, declared or sniffed', async () => {
    const a = await h().account();
    const limit = h().config.XML_BODY_LIMIT_BYTES;
    const xml = `<sms><message><text>${'a'.repeat(limit)}</text></message></sms>`;
    for (const contentType of ['application/xml', undefined, 'text/plain']) {
      const r = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        body: xml,
        contentType,
        accept: 'application/json',
      });
      expect(r.httpCode, String(contentType)).toBe(413);
      expect(r.body, String(contentType)).toEqual({
        status: -7,
        message: 'Request too large',
        details: `an XML body may be at most ${limit} bytes (XML_BODY_LIMIT_BYTES): send larger requests as JSON`,
      });
    }
    // The same size as JSON is under BODY_LIMIT_BYTES and read as usual.
    const json = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: sms({ text: 'a'.repeat(limit) }),
    });
    expect(json.body).toMatchObject({ status: -7, details: expect.stringMatching(/MAX_PARTS/) });
  });

  it('an XML body of a request without a valid credential is refused before it is parsed; legacy XML credentials still sign in', async () => {
    // Attribute-heavy and not even well-formed: parsed, it would answer -2; refused unparsed, it answers -1.
    const hostile = `<sms><message ${Array.from({ length: 2000 }, (_, i) => `a${i}="${i}"`).join(' ')}><text>x</sms>`;
    const attempts: { body: string; contentType?: string; why: string }[] = [
      { body: hostile, contentType: 'application/xml', why: 'declared' },
      { body: hostile, why: 'sniffed' },
      {
        body: `data=${encodeURIComponent(hostile)}`,
        contentType: 'application/x-www-form-urlencoded',
        why: 'in a form',
      },
    ];
    for (const { body, contentType, why } of attempts) {
      const r = await call(h().app, 'POST', '/send', { body, contentType, accept: 'application/json' });
      expect(r.body, why).toMatchObject({
        status: -1,
        details: expect.stringContaining('missing API token'),
      });
    }
    // Legacy credentials in the XML: wrong ones are refused unparsed too, right ones (entities, CDATA) sign in.
    const email = `xml-legacy-${h().dialect}@example.com`;
    await h().deps.services.accounts.createAccount({ email, password: 'p&ss <word>', credits: 10 });
    const withCredentials = (password: string, rest: string) =>
      `<?xml version="1.0"?><sms><authentication><username>${email}</username><password>${password}</password></authentication>${rest}</sms>`;
    const wrong = await call(h().app, 'POST', '/send/simulate', {
      xml: withCredentials(
        'guess',
        `<message ${Array.from({ length: 50 }, (_, i) => `b${i}=""`).join(' ')}>`,
      ),
      accept: 'application/json',
    });
    expect(wrong.body).toMatchObject({ status: -1 });
    const valid = `<message><text>Hello</text></message><recipients><gsm>${number}</gsm></recipients>`;
    for (const password of ['p&amp;ss &lt;word&gt;', '<![CDATA[p&ss <word>]]>']) {
      const right = await call(h().app, 'POST', '/send/simulate', {
        xml: withCredentials(password, valid),
        accept: 'application/json',
      });
      expect(right.body, password).toMatchObject({ status: 1 });
    }
  });

  it('a declared XML body over its limit is answered before the client has sent it', async () => {
    const a = await h().account();
    const port = await serve({ XML_BODY_LIMIT_BYTES: 4096 });
    const exchange = await open(port);
    const declared = 10 * 1024 * 1024;
    write(
      exchange,
      `POST /send HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/xml\r\nAccept: application/json\r\nContent-Length: ${declared}\r\n\r\n<sms>`,
    );
    const answer = parseAnswer(await within(exchange.answered, 5000, 'the 413'));
    expect(answer.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    expect(answer.body).toMatchObject({ status: -7, details: expect.stringMatching(/XML_BODY_LIMIT_BYTES/) });
    expect(exchange.written).toBeLessThan(declared);
    exchange.socket.destroy();
  });

  it('at most LARGE_BODY_CONCURRENCY large bodies are read at once: the next is read only when the first request ends', async () => {
    const a = await h().account();
    const port = await serve({ LARGE_BODY_BYTES: 2048, LARGE_BODY_CONCURRENCY: 1, REQUEST_TIMEOUT_MS: 400 });
    const body = JSON.stringify({ token: { name: 'large' }, pad: 'y'.repeat(4000) });
    const head = `POST /token HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const probe = async () => {
      const exchange = await open(port);
      write(exchange, `GET /credits HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer ${a.token}\r\n\r\n`);
      expect(parseAnswer(await within(exchange.answered, 5000, 'the probe')).body).toMatchObject({
        status: 1,
      });
      exchange.socket.destroy();
    };
    // Signed in once, so the token is known and the large requests below reach their bodies in order.
    await probe();

    // The first large body takes the one permit and holds it while its client stalls.
    const first = await open(port);
    write(first, head + body.slice(0, 100));
    let firstAnsweredAt = 0;
    void first.answered.then(() => {
      firstAnsweredAt = Date.now();
    });
    // A small request is not held up, and once it is answered the first is surely in line.
    await probe();
    // The second, sent whole, is not read meanwhile: it is answered only after the first's deadline ends it.
    const second = await open(port);
    write(second, head + body);
    const served = parseAnswer(await within(second.answered, 5000, 'the second answer'));
    const servedAt = Date.now();
    expect(served.body).toMatchObject({ status: 1, token_id: expect.stringMatching(/^\d+$/) });
    const timedOut = parseAnswer(await within(first.answered, 5000, 'the 408'));
    expect(timedOut.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(firstAnsweredAt).toBeGreaterThan(0);
    expect(firstAnsweredAt).toBeLessThanOrEqual(servedAt);
    second.socket.destroy();
  });

  // 4. Slow clients.

  it('a body trickled one byte every 200 ms is cut at REQUEST_TIMEOUT_MS from its start, though bytes keep coming', async () => {
    const a = await h().account();
    // The deadline is absolute: a byte every 200 ms would keep an idle timeout of 600 ms from ever firing.
    const deadlineMs = 600;
    const port = await serve({ REQUEST_TIMEOUT_MS: deadlineMs });
    const exchange = await open(port);
    const head = `POST /token HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    write(exchange, `${head}{`);
    const startedAt = Date.now();
    // The client's behaviour, so a timer drives it: 25 bytes at most (5 s), far fewer than the 100 declared.
    const trickle = 25;
    let trickled = 0;
    let answeredAt = 0;
    const timer = setInterval(() => {
      if (answeredAt > 0 || trickled === trickle || exchange.socket.destroyed) return clearInterval(timer);
      trickled++;
      write(exchange, ' ');
    }, 200);
    try {
      const raw = await within(exchange.closed, 4000, 'the 408 and the close, while the body still trickles');
      answeredAt = Date.now();
      const answer = parseAnswer(raw);
      expect(answer.statusLine).toBe('HTTP/1.1 408 Request Timeout');
      expect(answer.headers).toContain('connection: close');
      expect(answer.body).toEqual({
        status: -99,
        message: 'Request timeout',
        details: `the request body did not arrive within ${deadlineMs} ms (REQUEST_TIMEOUT_MS)`,
      });
      // Cut while the client was still sending (an idle timeout would wait for the trickle to stop), after
      // bytes had come in past the first 200 ms, and not before the deadline.
      expect(trickled).toBeGreaterThanOrEqual(2);
      expect(trickled).toBeLessThan(trickle);
      expect(answeredAt - startedAt).toBeGreaterThanOrEqual(deadlineMs - 50);
    } finally {
      clearInterval(timer);
    }
  });

  it('headers sent slowly are cut at HEADERS_TIMEOUT_MS with a 408 and the connection closed', async () => {
    const port = await serve({ HEADERS_TIMEOUT_MS: 200 });
    const exchange = await open(port);
    write(exchange, 'POST /send HTTP/1.1\r\nHost: pigeon\r\n');
    const answer = await within(exchange.closed, 5000, 'the close');
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  // 5. The token before the body.

  it('a refused token is answered -1 before the body is read', async () => {
    const port = await serve({});
    const exchange = await open(port);
    const declared = 30 * 1024 * 1024;
    write(
      exchange,
      `POST /send HTTP/1.1\r\nHost: pigeon\r\nAuthorization: Bearer not-a-token\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`,
    );
    write(exchange, Buffer.alloc(64 * 1024, 0x20));
    const answer = parseAnswer(await within(exchange.answered, 5000, 'the -1'));
    expect(answer.statusLine).toBe('HTTP/1.1 200 OK');
    expect(answer.body).toEqual({
      status: -1,
      message: 'Authentication error',
      details: 'unknown or revoked API token',
    });
    expect(answer.headers).toContain('connection: close');
    expect(exchange.written).toBeLessThan(declared);
    exchange.socket.destroy();
  });

  it('a request with no token may carry UNAUTHENTICATED_BODY_LIMIT_BYTES at most, declared or chunked; legacy credentials still sign in', async () => {
    const a = await h().account();
    const port = await serve({ UNAUTHENTICATED_BODY_LIMIT_BYTES: 4096 });
    const details =
      'a request without an API token may carry at most 4096 bytes (UNAUTHENTICATED_BODY_LIMIT_BYTES): send the token in the Authorization header';

    const declared = await open(port);
    write(
      declared,
      `POST /send HTTP/1.1\r\nHost: pigeon\r\nContent-Type: application/json\r\nContent-Length: ${30 * 1024 * 1024}\r\n\r\n{`,
    );
    const refused = parseAnswer(await within(declared.answered, 5000, 'the 413'));
    expect(refused.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    expect(refused.body).toEqual({ status: -7, message: 'Request too large', details });
    declared.socket.destroy();

    const chunked = await open(port);
    write(
      chunked,
      'POST /send HTTP/1.1\r\nHost: pigeon\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const chunk = Buffer.alloc(2048, 0x20);
    for (let i = 0; i < 3; i++)
      write(chunked, Buffer.concat([Buffer.from('800\r\n'), chunk, Buffer.from('\r\n')]));
    const cut = parseAnswer(await within(chunked.answered, 5000, 'the chunked 413'));
    expect(cut.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    expect(cut.body).toEqual({ status: -7, message: 'Request too large', details });
    chunked.socket.destroy();

    // Under the limit, legacy body credentials still work.
    const account = await h()
      .deps.store.db.selectFrom('accounts')
      .select('email')
      .where('id', '=', a.id)
      .executeTakeFirstOrThrow();
    const legacy = await call(h().app, 'POST', '/send/simulate', {
      json: {
        sms: {
          authentication: { username: account.email, password: 'correct horse battery' },
          message: { text: 'Hello' },
          recipients: { gsm: [{ value: number }] },
        },
      },
    });
    expect(legacy.body).toMatchObject({ status: 1, cost: 1 });
  });

  // 6. Content-Type.

  it('a Content-Type Fastify cannot read (json, xml, text, *, garbage) is sniffed, never a 415', async () => {
    const a = await h().account();
    for (const contentType of ['json', 'xml', 'text', '*', 'garbage', 'application/json, text/xml', '/']) {
      const json = await call(h().app, 'POST', '/token', {
        token: a.token,
        body: '{"token":{"name":"sniffed json"}}',
        contentType,
      });
      expect(json.httpCode, contentType).toBe(200);
      expect(json.body, contentType).toMatchObject({ status: 1 });
      const xml = await call(h().app, 'POST', '/token', {
        token: a.token,
        body: '<token><name>sniffed xml</name></token>',
        contentType,
      });
      expect(xml.contentType, contentType).toContain('xml');
      expect(xml.body, contentType).toMatchObject({ status: '1' });
      const form = await call(h().app, 'POST', '/token', {
        token: a.token,
        body: `data=${encodeURIComponent('{"token":{"name":"form"}}')}`,
        contentType,
      });
      expect(form.body, contentType).toMatchObject({ status: 1 });
    }
    const empty = await call(h().app, 'DELETE', '/token/999999', {
      token: a.token,
      body: '',
      contentType: 'json',
    });
    expect(empty.body).toMatchObject({ status: -5 });
  });
});
