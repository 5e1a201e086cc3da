// Console sessions as the API sees them, on both dialects: the cookie's caller, its CSRF token on every
// request (reads too), its expiry and pruning, a parent's switch into its own sub-accounts only, a lock that
// ends a sub-account's console too, and the API's brake per client IP on failed sign-ins.
import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

const password = 'correct horse battery';

describeEachDialect('console sessions', (h) => {
  async function signIn(email: string, pass = password) {
    const answer = await call(h().app, 'POST', '/console/session', { json: { email, password: pass } });
    const setCookie = String(answer.headers['set-cookie'] ?? '');
    const cookie = /pigeon_session=([^;]+)/.exec(setCookie)?.[1];
    return { answer, setCookie, cookie, csrf: answer.body.session?.csrf_token as string | undefined };
  }
  const withSession = (cookie: string, csrf?: string) => ({
    headers: { cookie: `pigeon_session=${cookie}`, ...(csrf ? { 'x-csrf-token': csrf } : {}) },
  });
  async function accountWithEmail(parentToken?: string) {
    const email = `s${Math.random().toString(36).slice(2)}@example.com`;
    if (parentToken) {
      const made = await call(h().app, 'POST', '/account', {
        token: parentToken,
        json: { account: { email, password, isChild: 1 } },
      });
      expect(made.body.status).toBe(1);
      return { email, id: Number(made.body.id) };
    }
    const created = await h().deps.services.accounts.createAccount({ email, password, credits: 50 });
    return { email, id: Number(created.account_id), token: created.token };
  }

  it('a session lasts CONSOLE_SESSION_HOURS (12 h), then answers -1, and the pruning job removes it', async () => {
    const { email } = await accountWithEmail();
    const { answer, setCookie, cookie, csrf } = await signIn(email);
    expect(answer.body.session).toMatchObject({ timezone: 'Europe/Paris', stop_mention: 'STOP au 36180' });
    expect(setCookie).toContain('Max-Age=43200');
    expect((await call(h().app, 'GET', '/credits', withSession(cookie!, csrf))).body).toMatchObject({
      credits: 50,
    });

    h().clock.advance(12 * 3_600_000);
    const expired = await call(h().app, 'GET', '/credits', withSession(cookie!, csrf));
    expect(expired.body).toMatchObject({ status: -1, details: expect.stringContaining('sign in again') });
    const prune = h().deps.services.pruneTasks.find((t) => t.name === 'console_sessions')!;
    expect(await prune.prune(h().clock.now() - prune.keepMs!, 100)).toBeGreaterThanOrEqual(1);
    expect(await prune.prune(h().clock.now() - prune.keepMs!, 100)).toBe(0);
  });

  it('login CSRF: a sign-in from another site (a form, text/plain, a foreign Origin or Sec-Fetch-Site) is refused before it is checked, and sets no cookie', async () => {
    const { email } = await accountWithEmail();
    const form = `data=${encodeURIComponent(JSON.stringify({ email, password }))}`;
    const json = JSON.stringify({ email, password });
    const evil = { origin: 'https://evil.example' };
    // [body, Content-Type, other headers, what the refusal says]
    const attempts: [string, string, Record<string, string>, string][] = [
      [json, 'text/plain', evil, 'Content-Type: application/json, not text/plain'],
      [form, 'application/x-www-form-urlencoded', evil, 'not application/x-www-form-urlencoded'],
      [json, 'text/plain', {}, 'not text/plain'],
      [json, 'application/json', evil, 'not from https://evil.example'],
      [json, 'application/json', { origin: 'null' }, 'not from null'],
      [json, 'application/json', { 'sec-fetch-site': 'cross-site' }, 'Sec-Fetch-Site: cross-site'],
    ];
    for (const [body, contentType, headers, why] of attempts) {
      const answer = await call(h().app, 'POST', '/console/session', { body, contentType, headers });
      expect(answer.httpCode, why).toBe(403);
      expect(answer.body, why).toMatchObject({ status: -1, details: expect.stringContaining(why) });
      expect(answer.headers['set-cookie'], why).toBeUndefined();
    }
    // The console's own page (same origin), and a client that is no browser (no Origin), sign in.
    const own: Record<string, string>[] = [
      { origin: 'http://localhost', 'sec-fetch-site': 'same-origin' },
      { origin: 'http://localhost:80' },
      {},
    ];
    for (const headers of own) {
      const answer = await call(h().app, 'POST', '/console/session', { json: { email, password }, headers });
      expect(answer.body.status, JSON.stringify(headers)).toBe(1);
      expect(String(answer.headers['set-cookie'])).toContain('pigeon_session=');
    }
  });

  it('a parent switches into its own sub-account only; the session then acts as that account', async () => {
    const parent = await accountWithEmail();
    const child = await accountWithEmail(parent.token);
    const stranger = await accountWithEmail();
    const { cookie, csrf } = await signIn(parent.email);

    const refused = await call(h().app, 'PUT', '/console/session/account', {
      json: { account_id: stranger.id },
      ...withSession(cookie!, csrf),
    });
    expect(refused.body.status).toBe(-5);
    const noCsrf = await call(h().app, 'PUT', '/console/session/account', {
      json: { account_id: child.id },
      ...withSession(cookie!),
    });
    expect(noCsrf.httpCode).toBe(403);

    const switched = await call(h().app, 'PUT', '/console/session/account', {
      json: { account_id: child.id },
      ...withSession(cookie!, csrf),
    });
    expect(switched.body.session).toMatchObject({
      signed_in_account_id: parent.id,
      account_id: child.id,
      parent_id: parent.id,
      account: { email: child.email },
    });
    expect((await call(h().app, 'GET', '/account', withSession(cookie!, csrf))).body.account.email).toBe(
      child.email,
    );

    // Locked by its parent, the sub-account's view answers -1; the parent goes back to its own.
    await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token });
    const lockedView = await call(h().app, 'GET', '/account', withSession(cookie!, csrf));
    expect(lockedView.body).toMatchObject({ status: -1, details: expect.stringContaining('locked') });
    const back = await call(h().app, 'PUT', '/console/session/account', {
      json: { account_id: null },
      ...withSession(cookie!, csrf),
    });
    expect(back.body.session).toMatchObject({ account_id: parent.id, account: { email: parent.email } });
  });

  it("a sub-account signs in to its own console, cannot switch into its parent's, and a lock refuses it", async () => {
    const parent = await accountWithEmail();
    const child = await accountWithEmail(parent.token);
    const { cookie, csrf } = await signIn(child.email);
    expect(cookie).toBeDefined();
    const up = await call(h().app, 'PUT', '/console/session/account', {
      json: { account_id: parent.id },
      ...withSession(cookie!, csrf),
    });
    expect(up.body.status).toBe(-5);

    await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token });
    const lockedView = await call(h().app, 'GET', '/credits', withSession(cookie!, csrf));
    expect(lockedView.body).toMatchObject({ status: -1, details: expect.stringContaining('locked') });
    const again = await signIn(child.email);
    expect(again.answer.body).toMatchObject({ status: -1, details: expect.stringContaining('locked') });
    expect(again.cookie).toBeUndefined();
  });

  it('wrong passwords are braked: after 5 in a minute the e-mail is refused unchecked, until the minute ends', async () => {
    const { email } = await accountWithEmail();
    for (let i = 0; i < 5; i++) {
      expect((await signIn(email, 'wrong')).answer.body).toMatchObject({
        status: -1,
        details: 'unknown e-mail or wrong password',
      });
    }
    const braked = await signIn(email);
    expect(braked.answer.body.details).toMatch(/too many wrong passwords/);
    expect(braked.cookie).toBeUndefined();
    h().clock.advance(60_000);
    expect((await signIn(email)).cookie).toBeDefined();
  });

  it('a GET that changes things (GET /send, GET /account/:id/lock) made with the session cookie but no CSRF token is refused: nothing sent, nothing debited, nothing locked', async () => {
    const parent = await accountWithEmail();
    const child = await accountWithEmail(parent.token);
    const { cookie, csrf } = await signIn(parent.email);
    const credits = async () =>
      (await call(h().app, 'GET', '/credits', { token: parent.token })).body.credits;
    const campaigns = async () =>
      (await call(h().app, 'GET', '/campaigns', { token: parent.token })).body.totalRecords;
    const childState = async () =>
      (await call(h().app, 'GET', `/sub-accounts/${child.id}`, { token: parent.token })).body['sub-account']
        .state;
    const sendUrl = '/send?to=33612345678&text=Hello%20from%20another%20site&pushtype=alert';

    // A page of another site can make the browser send these with the cookie, but not with the token.
    for (const headers of [withSession(cookie!), withSession(cookie!, 'not-the-token')]) {
      const sent = await call(h().app, 'GET', sendUrl, headers);
      expect(sent.httpCode).toBe(403);
      expect(sent.body).toMatchObject({ status: -1, details: expect.stringContaining('CSRF') });
      const locked = await call(h().app, 'GET', `/account/${child.id}/lock`, headers);
      expect(locked.httpCode).toBe(403);
      expect(locked.body).toMatchObject({ status: -1, details: expect.stringContaining('CSRF') });
    }
    // HEAD runs the same route as GET: refused the same way.
    expect((await call(h().app, 'HEAD', sendUrl, withSession(cookie!))).httpCode).toBe(403);
    expect(await credits()).toBe(50);
    expect(await campaigns()).toBe(0);
    expect(await childState()).toBe('active');
    // Plain reads too: the rule is per request, not per route.
    expect((await call(h().app, 'GET', '/credits', withSession(cookie!))).httpCode).toBe(403);

    // The console's own calls carry the token: the same requests work.
    const sent = await call(h().app, 'GET', sendUrl, withSession(cookie!, csrf));
    expect(sent.body).toMatchObject({ status: 1, sent: 1 });
    expect(await credits()).toBe(50 - sent.body.cost);
    expect(await campaigns()).toBe(1);
    const locked = await call(h().app, 'GET', `/account/${child.id}/lock`, withSession(cookie!, csrf));
    expect(locked.body).toMatchObject({ status: 1, state: 'locked' });
    expect(await childState()).toBe('locked');
    const unlocked = await call(h().app, 'GET', `/account/${child.id}/unlock`, withSession(cookie!, csrf));
    expect(unlocked.body).toMatchObject({ status: 1, state: 'unlocked' });
  });

  it('a token in the Authorization header wins over a session cookie on the same request', async () => {
    const a = await accountWithEmail();
    const b = await accountWithEmail();
    const { cookie } = await signIn(a.email);
    const answer = await call(h().app, 'GET', '/account', { token: b.token, ...withSession(cookie!) });
    expect(answer.body.account.email).toBe(b.email);
  });
});

describeEachDialect(
  'console sessions behind a TLS proxy',
  (h) => {
    it('the cookie is Secure when the request came over HTTPS through a trusted proxy, and not otherwise', async () => {
      const email = `tls${Math.random().toString(36).slice(2)}@example.com`;
      await h().deps.services.accounts.createAccount({ email, password, credits: 1 });
      const signIn = (headers: Record<string, string>) =>
        call(h().app, 'POST', '/console/session', { json: { email, password }, headers });
      const overTls = await signIn({ 'x-forwarded-proto': 'https' });
      expect(String(overTls.headers['set-cookie'])).toMatch(/; Secure$/);
      const plain = await signIn({});
      expect(String(plain.headers['set-cookie'])).not.toContain('Secure');
    });
  },
  { TRUST_PROXY: 'true' },
);

describeEachDialect(
  'console sign-ins and the brake per client IP',
  (h) => {
    const signInFrom = async (ip: string, email: string, pass: string) => {
      const response = await h().app.inject({
        method: 'POST',
        url: '/console/session',
        payload: { email, password: pass },
        remoteAddress: ip,
      });
      return {
        httpCode: response.statusCode,
        headers: response.headers,
        body: response.json() as { status: number; message: string; details: string },
      };
    };

    it('wrong sign-ins with a different e-mail each, from one client, are braked after RATE_LIMIT_AUTH_FAILURES: 429 with Retry-After and the envelope', async () => {
      const ip = '198.51.100.7';
      const email = `brake${Math.random().toString(36).slice(2)}@example.com`;
      await h().deps.services.accounts.createAccount({ email, password, credits: 1 });
      // No e-mail is tried twice, so the brake per e-mail never applies: only the one per address can.
      for (let i = 0; i < 5; i++) {
        const guess = await signInFrom(
          ip,
          `guess${i}-${Math.random().toString(36).slice(2)}@example.com`,
          'x',
        );
        expect(guess.httpCode).toBe(200);
        expect(guess.body).toMatchObject({ status: -1, details: 'unknown e-mail or wrong password' });
      }
      const braked = await signInFrom(ip, email, password);
      expect(braked.httpCode).toBe(429);
      expect(Number(braked.headers['retry-after'])).toBeGreaterThan(0);
      expect(braked.body).toMatchObject({
        status: -1,
        message: 'Too many requests',
        details: expect.stringContaining('too many failed sign-ins from 198.51.100.7'),
      });
      expect(braked.headers['set-cookie']).toBeUndefined();
      // The same brake as the API's: a wrong token from that address is refused, a valid one still served.
      const { token } = await h().account();
      const credits = (credential: string) =>
        h().app.inject({
          method: 'GET',
          url: '/credits',
          headers: { authorization: `Bearer ${credential}` },
          remoteAddress: ip,
        });
      expect((await credits('not-a-token')).statusCode).toBe(429);
      expect((await credits(token)).json()).toMatchObject({ status: 1 });
      // Another address signs in.
      const other = await signInFrom('198.51.100.8', email, password);
      expect(other.httpCode).toBe(200);
      expect(other.body.status).toBe(1);
    });

    it('wrong tokens and wrong sign-ins from one client add up to the same brake', async () => {
      const ip = '198.51.100.9';
      for (let i = 0; i < 3; i++) {
        const api = await h().app.inject({
          method: 'GET',
          url: '/credits',
          headers: { authorization: `Bearer not-a-token-${i}` },
          remoteAddress: ip,
        });
        expect(api.json()).toMatchObject({ status: -1 });
      }
      for (let i = 0; i < 2; i++) {
        const guess = await signInFrom(ip, `mix${i}-${Math.random().toString(36).slice(2)}@example.com`, 'x');
        expect(guess.body.status).toBe(-1);
        expect(guess.httpCode).toBe(200);
      }
      const braked = await signInFrom(ip, 'anyone@example.com', 'x');
      expect(braked.httpCode).toBe(429);
      expect(braked.headers['retry-after']).toBeDefined();
    });
  },
  { RATE_LIMIT_AUTH_FAILURES: '5' },
);
