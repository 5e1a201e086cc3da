// The console's sign-in: a session cookie the page's scripts cannot read, CSRF on every request, a brake on
// wrong passwords, and a session that authenticates the API's own routes and nothing more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';

describe('console sessions', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture();
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  it('signs in with the e-mail and password, shows the account, and signs out', async () => {
    const { email, password } = await f.account({ credits: 1234 });
    const context = await f.context();
    const page = await context.newPage();
    await page.goto('/console');
    await page.getByRole('heading', { name: 'Sign in to Pigeon' }).waitFor();
    await f.screenshot(page, 'sign-in');

    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('wrong password');

    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    expect(await page.getByTestId('balance').textContent()).toBe('1,234 credits');

    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({
      name: 'pigeon_session',
      httpOnly: true,
      sameSite: 'Strict',
      secure: false,
    });
    expect(await page.evaluate(() => document.cookie)).toBe('');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Pigeon' }).waitFor();
    // The cookie no longer signs anything in, even if a copy of it was kept.
    const again = await fetch(`${f.apiUrl}/credits`, {
      headers: { cookie: `pigeon_session=${cookie.value}` },
    });
    expect(await again.json()).toMatchObject({ status: -1 });
    await context.close();
  });

  it('works from the keyboard alone: sign in, move through the menu, open a page', async () => {
    const { email, password } = await f.account();
    const context = await f.context();
    const page = await context.newPage();
    await page.goto('/console');
    await page.getByLabel('E-mail').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await page.getByTestId('balance').waitFor();
    // The first Tab reaches the skip link, which takes the focus to the page itself.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the page');
    // Tabbing on reaches the menu's links; Enter on one opens its page.
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => document.activeElement?.textContent)) === 'Tokens') break;
    }
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/tokens$/);
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    await context.close();
  });

  it('a request made with the session cookie but without its CSRF token is refused, a read too, and nothing changes', async () => {
    const { email, password } = await f.account();
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);
    const [cookie] = await context.cookies();
    const headers = { cookie: `pigeon_session=${cookie.value}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ token: { name: 'from another site' } });

    const refused = await fetch(`${f.apiUrl}/token`, { method: 'POST', headers, body });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ status: -1, details: expect.stringContaining('CSRF') });
    const wrong = await fetch(`${f.apiUrl}/token`, {
      method: 'POST',
      headers: { ...headers, 'x-csrf-token': 'not-the-token' },
      body,
    });
    expect(wrong.status).toBe(403);
    // Reads too: some GET routes change things (GET /send, GET /account/:id/lock), so the cookie alone
    // authenticates nothing.
    const read = await fetch(`${f.apiUrl}/token`, { headers });
    expect(read.status).toBe(403);
    expect(await read.json()).toMatchObject({ status: -1, details: expect.stringContaining('CSRF') });
    const session = (await (await fetch(`${f.apiUrl}/console/session`, { headers })).json()) as {
      session: { csrf_token: string };
    };
    const list = (await (
      await fetch(`${f.apiUrl}/token`, {
        headers: { ...headers, 'x-csrf-token': session.session.csrf_token },
      })
    ).json()) as { tokens: { name: string }[] };
    expect(list.tokens.map((t) => t.name)).not.toContain('from another site');

    // The page's own calls carry it: the same change made through the session's token works.
    const made = await fetch(`${f.apiUrl}/token`, {
      method: 'POST',
      headers: { ...headers, 'x-csrf-token': session.session.csrf_token },
      body,
    });
    expect(await made.json()).toMatchObject({ status: 1 });
    await context.close();
  });

  it("every API call the page makes carries the session's CSRF token, reads included, on every page of the menu", async () => {
    const { email, password } = await f.account();
    const context = await f.context();
    const page = await context.newPage();
    const calls: { method: string; path: string; csrf: string | undefined }[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      // The page and its assets are the only things loaded without it; the sign-in precedes any session.
      if (url.origin !== f.apiUrl || url.pathname === '/console' || url.pathname.startsWith('/console/'))
        return;
      calls.push({ method: request.method(), path: url.pathname, csrf: request.headers()['x-csrf-token'] });
    });
    await f.signIn(page, email, password);
    const [cookie] = await context.cookies();
    const { csrf_token } = (
      (await (
        await fetch(`${f.apiUrl}/console/session`, { headers: { cookie: `pigeon_session=${cookie.value}` } })
      ).json()) as { session: { csrf_token: string } }
    ).session;
    const menu = page.getByRole('navigation', { name: 'Console' });
    for (const [link, heading] of [
      ['Campaigns', 'Campaigns'],
      ['Send', 'Send a campaign'],
      ['Lists', 'Lists'],
      ['Blacklist', 'Blacklist and NPAI'],
      ['Tokens', 'API tokens'],
      ['SMPP', 'SMPP users'],
      ['Webhooks', 'Webhooks'],
      ['Balance alert', 'Balance alert'],
      ['Sub-accounts', 'Sub-accounts'],
      ['Dashboard', 'Dashboard'],
    ]) {
      await menu.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await expect.poll(() => page.locator('.loading').count()).toBe(0);
      expect(await page.locator('.notice-error').count()).toBe(0);
    }
    // Each page read something from the API, and every call carried the token: none was refused.
    expect(calls.filter((c) => c.method === 'GET').length).toBeGreaterThanOrEqual(10);
    expect(calls.filter((c) => c.csrf !== csrf_token)).toEqual([]);
    await context.close();
  });

  it('the page is served with a policy that runs its own scripts only, and is never framed', async () => {
    const page = await fetch(`${f.apiUrl}/console/campaigns`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(await page.text()).toContain('/console/assets/app.js');
    const missing = await fetch(`${f.apiUrl}/console/assets/nothing.js`);
    expect(missing.status).toBe(404);
  });

  it('bad sign-in input answers in the envelope', async () => {
    const answer = await fetch(`${f.apiUrl}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ['x'], password: 3 }),
    });
    expect(await answer.json()).toMatchObject({ status: -7, details: 'email and password are required' });
    const none = await fetch(`${f.apiUrl}/console/session`);
    expect(await none.json()).toMatchObject({ status: -1 });
  });
});
