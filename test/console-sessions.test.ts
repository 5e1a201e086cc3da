// Console sessions as the API sees them, on both dialects: the cookie's caller, its expiry and pruning, a
// parent's switch into its own sub-accounts only, and a lock that ends a sub-account's console too.
import { expect, it } from 'vitest';
import { call, describeEachDialect } from './helpers/harness.ts';

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
    const { answer, setCookie, cookie } = await signIn(email);
    expect(answer.body.session).toMatchObject({ timezone: 'Europe/Paris', stop_mention: 'STOP au 36180' });
    expect(setCookie).toContain('Max-Age=43200');
    expect((await call(h().app, 'GET', '/credits', withSession(cookie!))).body).toMatchObject({
      credits: 50,
    });

    h().clock.advance(12 * 3_600_000);
    expect((await call(h().app, 'GET', '/credits', withSession(cookie!))).body.status).toBe(-1);
    const prune = h().deps.services.pruneTasks.find((t) => t.name === 'console_sessions')!;
    expect(await prune.prune(h().clock.now() - prune.keepMs!, 100)).toBeGreaterThanOrEqual(1);
    expect(await prune.prune(h().clock.now() - prune.keepMs!, 100)).toBe(0);
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
    expect((await call(h().app, 'GET', '/account', withSession(cookie!))).body.account.email).toBe(
      child.email,
    );

    // Locked by its parent, the sub-account's view answers -1; the parent goes back to its own.
    await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token });
    expect((await call(h().app, 'GET', '/account', withSession(cookie!))).body.status).toBe(-1);
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
    expect((await call(h().app, 'GET', '/credits', withSession(cookie!))).body.status).toBe(-1);
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
