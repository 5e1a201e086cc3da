// The API's request limits: per token (RATE_LIMIT_TOKEN_RPS), per client IP for requests without valid
// credentials (RATE_LIMIT_IP_RPS), and the brake on failed sign-ins per IP. Each app here runs on the
// harness's manual clock, so a window passes when the test moves the clock.
import { afterAll, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { describeEachDialect, type Harness } from '../helpers/harness.ts';

interface Request {
  token?: string;
  ip?: string;
  headers?: Record<string, string>;
  payload?: string;
  method?: 'GET' | 'POST';
}

async function send(app: App, url: string, request: Request = {}) {
  const headers: Record<string, string> = { ...request.headers };
  if (request.token) headers.authorization = `Bearer ${request.token}`;
  if (request.payload) headers['content-type'] = 'application/json';
  const response = await app.inject({
    method: request.method ?? 'GET',
    url,
    headers,
    payload: request.payload,
    remoteAddress: request.ip ?? '203.0.113.7',
  });
  const body = response.headers['content-type']?.toString().includes('json')
    ? (response.json() as { status: number; message: string; details?: string })
    : undefined;
  return { httpCode: response.statusCode, headers: response.headers, body, raw: response.body };
}

/** A legacy client's simulated send, signed in with `sms.authentication`. */
const simulation = (username: string, password: string) =>
  JSON.stringify({
    sms: {
      authentication: { username, password },
      message: { text: 'Hello', pushtype: 'alert' },
      recipients: { gsm: [{ value: '33612345678' }] },
    },
  });

describeEachDialect('rate limits', (h) => {
  const apps: App[] = [];

  /** An API app on the harness's database and manual clock, with these limits. */
  async function appWith(limits: Partial<Config>): Promise<App> {
    const harness: Harness = h();
    const app = buildApi({
      config: {
        ...harness.config,
        RATE_LIMIT_TOKEN_RPS: 0,
        RATE_LIMIT_IP_RPS: 0,
        RATE_LIMIT_AUTH_FAILURES: 0,
        ...limits,
      },
      logger: harness.deps.logger,
      services: harness.deps.services,
      clock: harness.clock,
    });
    await app.ready();
    apps.push(app);
    return app;
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('a token over RATE_LIMIT_TOKEN_RPS gets 429 with Retry-After and the envelope, and is served again after the second', async () => {
    const app = await appWith({ RATE_LIMIT_TOKEN_RPS: 3 });
    const { token, id } = await h().account();
    for (let i = 0; i < 3; i++) {
      const ok = await send(app, '/credits', { token });
      expect(ok.httpCode).toBe(200);
      expect(ok.body?.status).toBe(1);
    }
    const refused = await send(app, '/credits', { token });
    expect(refused.httpCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({
      status: -99,
      message: 'Too many requests',
      details: expect.stringContaining('more than 3 requests per second with API token'),
    });
    // The details name the token by its id, never its text.
    expect(refused.raw).not.toContain(token);

    // The same refusal in XML for a client that asks for it.
    const xml = await send(app, '/credits', { token, headers: { accept: 'application/xml' } });
    expect(xml.httpCode).toBe(429);
    expect(xml.raw).toContain('<status>-99</status>');

    // Per token: another token of the same account has its own second.
    const other = await h().deps.services.tokens.createTokenForCli(id, 'second');
    expect((await send(app, '/credits', { token: other.token })).httpCode).toBe(200);

    h().clock.advance(1000);
    const again = await send(app, '/credits', { token });
    expect(again.httpCode).toBe(200);
    expect(again.body?.status).toBe(1);
  });

  it('legacy body credentials are limited per account under RATE_LIMIT_TOKEN_RPS', async () => {
    const app = await appWith({ RATE_LIMIT_TOKEN_RPS: 1 });
    const email = `legacy-limit-${h().dialect}@example.com`;
    await h().deps.services.accounts.createAccount({ email, password: 'correct horse battery', credits: 10 });
    const payload = simulation(email, 'correct horse battery');
    const first = await send(app, '/send/simulate', { method: 'POST', payload });
    expect(first.body?.status).toBe(1);
    const second = await send(app, '/send/simulate', { method: 'POST', payload });
    expect(second.httpCode).toBe(429);
    expect(second.body?.details).toContain('(body credentials)');
  });

  it('with RATE_LIMIT_TOKEN_RPS=0 a token is never answered 429', async () => {
    const app = await appWith({ RATE_LIMIT_TOKEN_RPS: 0, RATE_LIMIT_IP_RPS: 5 });
    const { token } = await h().account();
    for (let i = 0; i < 200; i++) {
      const response = await send(app, '/credits', { token });
      expect(response.httpCode).toBe(200);
    }
  });

  it('requests without valid credentials are limited per client IP; signed-in ones from that IP are not', async () => {
    const app = await appWith({ RATE_LIMIT_IP_RPS: 4 });
    const { token } = await h().account();
    // Unknown paths, the API description and a request with no token all count against the address.
    expect((await send(app, '/no-such-path')).body?.status).toBe(-5);
    expect((await send(app, '/openapi.json')).httpCode).toBe(200);
    expect((await send(app, '/credits')).body?.status).toBe(-1);
    expect((await send(app, '/no-such-path')).body?.status).toBe(-5);
    const refused = await send(app, '/no-such-path');
    expect(refused.httpCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({
      status: -99,
      message: 'Too many requests',
      details: expect.stringContaining(
        'more than 4 requests per second without valid credentials from 203.0.113.7',
      ),
    });
    expect((await send(app, '/credits')).httpCode).toBe(429);
    expect((await send(app, '/openapi.json')).httpCode).toBe(429);

    // A valid token from the same address is served; another address has its own count.
    for (let i = 0; i < 10; i++) expect((await send(app, '/credits', { token })).httpCode).toBe(200);
    expect((await send(app, '/no-such-path', { ip: '198.51.100.9' })).body?.status).toBe(-5);

    h().clock.advance(1000);
    expect((await send(app, '/no-such-path')).body?.status).toBe(-5);
  });

  it('behind TRUST_PROXY the IP limit counts each forwarded client apart; without it, the proxy is one client', async () => {
    const trusting = await appWith({ RATE_LIMIT_IP_RPS: 1, TRUST_PROXY: 'true' });
    const from = (client: string) => ({ ip: '127.0.0.1', headers: { 'x-forwarded-for': client } });
    expect((await send(trusting, '/nope', from('192.0.2.1'))).httpCode).toBe(200);
    expect((await send(trusting, '/nope', from('192.0.2.2'))).httpCode).toBe(200);
    expect((await send(trusting, '/nope', from('192.0.2.1'))).httpCode).toBe(429);

    const direct = await appWith({ RATE_LIMIT_IP_RPS: 1, TRUST_PROXY: 'false' });
    expect((await send(direct, '/nope', from('192.0.2.1'))).httpCode).toBe(200);
    expect((await send(direct, '/nope', from('192.0.2.2'))).httpCode).toBe(429);
  });

  it('behind TRUST_PROXY only the entries trusted proxies added count: a client rotating X-Forwarded-For is still braked, and cannot brake another', async () => {
    for (const trust of ['true', '1', '127.0.0.1']) {
      const app = await appWith({
        RATE_LIMIT_AUTH_FAILURES: 3,
        RATE_LIMIT_AUTH_WINDOW: '1m',
        TRUST_PROXY: trust,
      });
      // The proxy (127.0.0.1) appends the address it saw, 198.51.100.66, to whatever the client wrote.
      const attempt = (claimed: string) =>
        send(app, '/credits', {
          token: 'a-guess',
          ip: '127.0.0.1',
          headers: { 'x-forwarded-for': `${claimed}, 198.51.100.66` },
        });
      for (let i = 0; i < 3; i++) expect((await attempt(`192.0.2.${i}`)).httpCode, trust).toBe(200);
      const braked = await attempt('192.0.2.99');
      expect(braked.httpCode, trust).toBe(429);
      expect(braked.body?.details, trust).toContain('from 198.51.100.66');
      // The victim whose address the attacker claimed is not braked.
      const victim = await send(app, '/credits', {
        token: 'victim-typo',
        ip: '127.0.0.1',
        headers: { 'x-forwarded-for': '192.0.2.0' },
      });
      expect(victim.httpCode, trust).toBe(200);
      expect(victim.body?.status, trust).toBe(-1);
    }
  });

  it('after RATE_LIMIT_AUTH_FAILURES failed sign-ins an IP gets 429 for wrong tokens and passwords until the window passes', async () => {
    const app = await appWith({ RATE_LIMIT_AUTH_FAILURES: 3, RATE_LIMIT_AUTH_WINDOW: '1m' });
    const email = `braked-${h().dialect}@example.com`;
    await h().deps.services.accounts.createAccount({ email, password: 'correct horse battery', credits: 10 });
    // No credential at all is not a failed guess: it does not count.
    for (let i = 0; i < 5; i++) expect((await send(app, '/credits')).body?.status).toBe(-1);
    for (let i = 0; i < 3; i++) {
      const wrong = await send(app, '/credits', { token: `guess-${i}` });
      expect(wrong.httpCode).toBe(200);
      expect(wrong.body?.status).toBe(-1);
    }
    h().clock.advance(10_000);
    const braked = await send(app, '/credits', { token: 'guess-again' });
    expect(braked.httpCode).toBe(429);
    expect(braked.headers['retry-after']).toBe('50');
    expect(braked.body).toEqual({
      status: -1,
      message: 'Too many requests',
      details: 'too many failed sign-ins from 203.0.113.7: sign-ins from it are refused for 50 s',
    });
    // A password is guessable: even the right one is not checked from a braked address.
    const password = await send(app, '/send/simulate', {
      method: 'POST',
      payload: simulation(email, 'correct horse battery'),
    });
    expect(password.httpCode).toBe(429);
    expect(password.body?.status).toBe(-1);
    // Another address is not braked.
    expect(
      (
        await send(app, '/send/simulate', {
          method: 'POST',
          payload: simulation(email, 'correct horse battery'),
          ip: '198.51.100.9',
        })
      ).body?.status,
    ).toBe(1);

    h().clock.advance(50_000);
    const after = await send(app, '/send/simulate', {
      method: 'POST',
      payload: simulation(email, 'correct horse battery'),
    });
    expect(after.httpCode).toBe(200);
    expect(after.body?.status).toBe(1);
  });

  it("a valid token is never braked by its address's failures: a neighbour with a stale token does not lock it out", async () => {
    const app = await appWith({ RATE_LIMIT_AUTH_FAILURES: 3, RATE_LIMIT_AUTH_WINDOW: '1m' });
    const { token } = await h().account();
    // One client behind a shared NAT keeps sending a stale token; another, from the same address, a valid one.
    for (let round = 0; round < 10; round++) {
      const stale = await send(app, '/credits', { token: 'revoked-long-ago' });
      if (round < 3) expect(stale.body?.status).toBe(-1);
      else expect(stale.httpCode).toBe(429);
      const good = await send(app, '/credits', { token });
      expect(good.httpCode).toBe(200);
      expect(good.body?.status).toBe(1);
    }
  });

  it('wrong legacy passwords count toward the IP brake, across usernames', async () => {
    const app = await appWith({ RATE_LIMIT_AUTH_FAILURES: 2, RATE_LIMIT_AUTH_WINDOW: '1m' });
    const attempt = (username: string) =>
      send(app, '/send/simulate', {
        method: 'POST',
        payload: simulation(username, 'not the password'),
        ip: '192.0.2.50',
      });
    for (const username of ['a@example.com', 'b@example.com']) {
      const wrong = await attempt(username);
      expect(wrong.httpCode).toBe(200);
      expect(wrong.body?.status).toBe(-1);
    }
    const braked = await attempt('c@example.com');
    expect(braked.httpCode).toBe(429);
    expect(braked.body?.status).toBe(-1);
    expect(braked.headers['retry-after']).toBe('60');
  });
});
