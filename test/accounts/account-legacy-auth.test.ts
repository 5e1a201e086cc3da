// Legacy body credentials: without an Authorization header, `sms.authentication:{username, password}` (the
// account's e-mail and password) authenticates the request; a wrong pair, a locked account or a username
// under a storm of wrong passwords answers -1, and the password checks running at once are bounded.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';

const harnessPassword = 'correct horse battery';

describeEachDialect('legacy body credentials', (h) => {
  const emailOf = async (a: TestAccount) =>
    (await call(h().app, 'GET', '/account', { token: a.token })).body.account.email as string;

  const simulate = (username: string, password: string, extra: { token?: string } = {}) =>
    call(h().app, 'POST', '/send/simulate', {
      ...extra,
      json: {
        sms: {
          authentication: { username, password },
          message: { text: 'Hello', pushtype: 'alert' },
          recipients: { gsm: [{ value: '33612345678' }] },
        },
      },
    });

  const wrongPair = {
    status: -1,
    message: 'Authentication error',
    details: 'sms.authentication: unknown username or wrong password',
  };

  it("authenticates a send with the account's e-mail and password, in JSON and XML", async () => {
    const a = await h().account({ credits: 50 });
    const email = await emailOf(a);
    const json = await simulate(email.toUpperCase(), harnessPassword);
    // A simulation answers the balance the send would leave.
    expect(json.body).toMatchObject({ status: 1, cost: 1, credits: 49, total: 1, sent: 1 });
    const sent = await call(h().app, 'POST', '/send', {
      xml: `<sms><authentication><username>${email}</username><password>${harnessPassword}</password></authentication><message><text>Hi</text></message><recipients><gsm>33612345678</gsm></recipients></sms>`,
    });
    expect(sent.contentType).toContain('application/xml');
    expect(sent.body).toMatchObject({
      status: '1',
      cost: '1',
      credits: '49',
      ticket: expect.stringMatching(/^\d+$/),
    });
    // The campaign is the account's.
    const campaign = await call(h().app, 'GET', `/campaign/${sent.body.ticket}`, { token: a.token });
    expect(campaign.body.status).toBe(1);
  });

  it('a wrong password, an unknown username or a missing field answers -1', async () => {
    const a = await h().account();
    const email = await emailOf(a);
    expect((await simulate(email, 'wrong password')).body).toEqual(wrongPair);
    expect((await simulate('nobody@example.com', harnessPassword)).body).toEqual(wrongPair);
    expect((await simulate(email, '')).body).toEqual({
      status: -1,
      message: 'Authentication error',
      details: 'sms.authentication needs a username (the account e-mail) and a password',
    });
    // Without credentials anywhere, the token is asked for.
    const none = await call(h().app, 'POST', '/send/simulate', {
      json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ value: '33612345678' }] } } },
    });
    expect(none.body).toMatchObject({ status: -1, details: expect.stringContaining('missing API token') });
  });

  it('an Authorization header wins over body credentials', async () => {
    const a = await h().account();
    const r = await simulate('nobody@example.com', 'whatever', { token: a.token });
    expect(r.body.status).toBe(1);
  });

  it("a locked sub-account's credentials answer -1 until it is unlocked", async () => {
    const parent = await h().account();
    const email = `legacy-${Date.now()}@example.com`;
    const created = await call(h().app, 'POST', '/account', {
      token: parent.token,
      json: { account: { email, password: 'sub-password', isChild: 1 } },
    });
    const childId = created.body.id;
    await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      json: { transfer: { to_account: childId, credits: 5 } },
    });
    expect((await simulate(email, 'sub-password')).body).toMatchObject({ status: 1, credits: 4 });
    await call(h().app, 'GET', `/account/${childId}/lock`, { token: parent.token });
    expect((await simulate(email, 'sub-password')).body).toEqual({
      status: -1,
      message: 'Authentication error',
      details: `account ${childId} is locked by its parent account: it cannot use the API until unlocked`,
    });
    await call(h().app, 'GET', `/account/${childId}/unlock`, { token: parent.token });
    expect((await simulate(email, 'sub-password')).body.status).toBe(1);
  });

  it('after 5 wrong passwords a username is refused unchecked for a minute; known credentials still pass', async () => {
    const a = await h().account();
    const b = await h().account();
    const [emailA, emailB] = [await emailOf(a), await emailOf(b)];
    // B's client signed in before the storm.
    expect((await simulate(emailB, harnessPassword)).body.status).toBe(1);
    for (const email of [emailA, emailB]) {
      for (let i = 0; i < 5; i++) expect((await simulate(email, `guess ${i}`)).body).toEqual(wrongPair);
    }
    const refused = await simulate(emailA, harnessPassword);
    expect(refused.body).toEqual({
      status: -1,
      message: 'Authentication error',
      details: `too many wrong passwords for ${emailA}: sign-ins with it are refused for 60 s`,
    });
    expect((await simulate(emailA, 'guess 6')).body.status).toBe(-1);
    expect((await simulate(emailB, harnessPassword)).body.status).toBe(1);
    h().clock.advance(30_000);
    expect((await simulate(emailA, harnessPassword)).body.details).toBe(
      `too many wrong passwords for ${emailA}: sign-ins with it are refused for 30 s`,
    );
    h().clock.advance(30_000);
    expect((await simulate(emailA, harnessPassword)).body.status).toBe(1);
    // Tokens were never affected.
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.status).toBe(1);
  });

  it('password checks running at once are bounded: the surplus answers HTTP 429 with Retry-After', async () => {
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => simulate(`storm${i}@example.com`, 'wrong password')),
    );
    const limited = results.filter((r) => r.httpCode === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) {
      expect(r.headers['retry-after']).toBe('1');
      expect(r.body).toMatchObject({ status: -1, message: 'Too many requests' });
    }
    for (const r of results.filter((x) => x.httpCode !== 429)) expect(r.body).toEqual(wrongPair);
  });
});
