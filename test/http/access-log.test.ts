// The access log (ACCESS_LOG=on: one line per request, never a token, a body or a query string) and the
// X-Request-Id every answer echoes, read from the app's own pino output.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { describeEachDialect } from '../helpers/harness.ts';

interface LogLine {
  msg: string;
  reqId?: string;
  method?: string;
  route?: string | null;
  status?: number;
  latencyMs?: number;
  accountId?: number | null;
  [key: string]: unknown;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeEachDialect('access log and request ids', (h) => {
  const apps: App[] = [];

  /** An API app on the harness's database whose log lines (and their raw text) land in `lines`/`raw`. */
  async function appLogging(config: Partial<Config>) {
    const lines: LogLine[] = [];
    let raw = '';
    const destination = new Writable({
      write(chunk, _encoding, done) {
        raw += String(chunk);
        for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    const app = buildApi({
      config: { ...h().config, ...config },
      logger: pino({ level: 'info' }, destination),
      services: h().deps.services,
      // Rate-limit windows on the manual clock: they stay put while a test runs.
      clock: h().clock,
    });
    await app.ready();
    apps.push(app);
    return { app, lines, raw: () => raw };
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('with ACCESS_LOG=on writes one line per request: method, route, status, latency, account and request id; no token, body or query', async () => {
    const { app, lines, raw } = await appLogging({ ACCESS_LOG: 'on' });
    const { token, id } = await h().account({ credits: 10 });
    const sendBody = {
      sms: {
        message: { text: 'Secret body text', pushtype: 'alert' },
        recipients: { gsm: [{ value: '33612345678' }] },
      },
    };
    const sent = await app.inject({
      method: 'POST',
      url: '/send/simulate',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify(sendBody),
    });
    const viaQuery = await app.inject({
      method: 'GET',
      url: `/send/simulate?token=${token}&text=Hi&to=33612345678`,
    });
    const refused = await app.inject({ method: 'GET', url: '/credits', headers: { authorization: 'nope' } });
    const unknown = await app.inject({ method: 'GET', url: '/no/such/path?token=abc' });

    const access = lines.filter((l) => l.msg === 'request');
    expect(access).toHaveLength(4);
    const [first, second, third, fourth] = access;
    expect(first).toMatchObject({
      method: 'POST',
      route: '/send/simulate',
      status: 200,
      accountId: id,
      reqId: sent.headers['x-request-id'],
    });
    expect(typeof first.latencyMs).toBe('number');
    expect(first.latencyMs).toBeGreaterThanOrEqual(0);
    expect(second).toMatchObject({ method: 'GET', route: '/send/simulate', status: 200, accountId: id });
    expect(second.reqId).toBe(viaQuery.headers['x-request-id']);
    expect(third).toMatchObject({ method: 'GET', route: '/credits', status: 200, accountId: null });
    expect(third.reqId).toBe(refused.headers['x-request-id']);
    expect(fourth).toMatchObject({ method: 'GET', route: null, status: 200, accountId: null });
    expect(fourth.reqId).toBe(unknown.headers['x-request-id']);

    // Nothing of the credentials, the body or the query reaches the log.
    expect(raw()).not.toContain(token);
    expect(raw()).not.toContain('Secret body text');
    expect(raw()).not.toContain('33612345678');
    expect(raw()).not.toContain('token=');
  });

  it('with ACCESS_LOG=off (the default) writes no line per request', async () => {
    expect(h().config.ACCESS_LOG).toBe('off');
    const { app, lines } = await appLogging({});
    const { token } = await h().account();
    for (let i = 0; i < 3; i++) {
      await app.inject({ method: 'GET', url: '/credits', headers: { authorization: token } });
    }
    expect(lines.filter((l) => l.msg === 'request')).toEqual([]);
  });

  it('echoes a sane X-Request-Id, and replaces one too long or with other characters by a new UUID', async () => {
    const { app, lines } = await appLogging({ ACCESS_LOG: 'on' });
    const { token } = await h().account();
    const echoed = async (given: string | undefined) => {
      const response = await app.inject({
        method: 'GET',
        url: '/credits',
        headers: { authorization: token, ...(given === undefined ? {} : { 'x-request-id': given }) },
      });
      return String(response.headers['x-request-id']);
    };
    expect(await echoed('req-42_a.b:c')).toBe('req-42_a.b:c');
    expect(await echoed('0f8fad5b-d9cb-469f-a165-70867728950e')).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(lines.at(-1)?.reqId).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
    for (const insane of [
      'a'.repeat(129),
      'has space',
      'quote"d',
      '{"json":1}',
      '<script>',
      '-leading-dash',
    ]) {
      const id = await echoed(insane);
      expect(id).toMatch(uuid);
      expect(lines.at(-1)?.reqId).toBe(id);
    }
    // None given: a new one per request.
    const a = await echoed(undefined);
    const b = await echoed(undefined);
    expect(a).toMatch(uuid);
    expect(b).toMatch(uuid);
    expect(a).not.toBe(b);
  });

  it('echoes X-Request-Id on every kind of answer: success, API error, unknown path, rate limit, body too large, bad URL', async () => {
    const { app } = await appLogging({ RATE_LIMIT_IP_RPS: 1, BODY_LIMIT_BYTES: 1024 });
    const { token } = await h().account();
    let sent = 0;
    const idOf = async (
      request: { method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: string },
      expectedCode: number,
    ) => {
      const requestId = `check-${++sent}`;
      const response = await app.inject({
        ...request,
        headers: { ...request.headers, 'x-request-id': requestId },
      });
      expect(response.statusCode).toBe(expectedCode);
      expect(response.headers['x-request-id']).toBe(requestId);
      return response;
    };
    await idOf({ method: 'GET', url: '/credits', headers: { authorization: token } }, 200);
    const notFound = await idOf(
      { method: 'GET', url: '/campaign/999999', headers: { authorization: token } },
      200,
    );
    expect(notFound.json().status).toBe(-5);
    // Both without credentials: the second is past RATE_LIMIT_IP_RPS.
    const unknownPath = await idOf({ method: 'GET', url: '/no/such/path' }, 200);
    expect(unknownPath.json().status).toBe(-5);
    await idOf({ method: 'GET', url: '/credits' }, 429);
    await idOf(
      {
        method: 'POST',
        url: '/send',
        headers: { authorization: token, 'content-type': 'application/json' },
        payload: JSON.stringify({ sms: { message: { text: 'x'.repeat(2000) } } }),
      },
      413,
    );
    const badUrl = await idOf(
      { method: 'GET', url: '/campaign/%E0%A4%A', headers: { authorization: token } },
      400,
    );
    expect(badUrl.json().status).toBe(-7);
  });
});
