// A marketer's whole path through the console, with nothing done through the API by hand: sign in, write a
// campaign with a tracked link in the send form, watch it reach "delivered" on its page (the carrier
// simulator delivers every message), follow the short link from a phone's browser, and see the click.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

describe('the console, from the send form to a click', () => {
  let f: ConsoleFixture;
  /** The shop's page the short link leads to: a loopback server the phone's browser really lands on. */
  let landing: WebhookReceiver;
  beforeAll(async () => {
    f = await startConsoleFixture();
    landing = await new WebhookReceiver().listen();
    landing.answer = () => ({
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: '<!doctype html><title>Parcel 42</title><h1>Your parcel</h1>',
    });
  }, 600_000);
  afterAll(async () => {
    await landing?.close();
    await f?.close();
  });

  it('sends from the form, shows the campaign delivered, and counts a click on its short link', async () => {
    const { email, password } = await f.account({ credits: 100 });
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);

    await page.getByRole('link', { name: 'Send', exact: true }).click();
    await page.getByLabel('Text').fill('Your parcel is on its way: <-short->');
    await page.getByLabel('Short link URL').fill(landing.url('/track/42'));
    await page.getByLabel('Numbers', { exact: true }).fill('33612345601\n33612345602');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/console\/campaigns\/\d+$/);

    // Delivered on the page itself, without a reload.
    await expect
      .poll(() => page.getByTestId('funnel-delivered').textContent(), { timeout: 20_000 })
      .toMatch(/^2\b/);
    await expect.poll(() => page.locator('td .state-delivered').count()).toBe(2);
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('98 credits');

    // The message as the recipient received it, read with the session (its CSRF token on reads too).
    const ticket = page.url().split('/').pop()!;
    const session = await context.cookies();
    const cookie = `pigeon_session=${session[0].value}`;
    const { csrf_token } = (
      (await (await fetch(`${f.apiUrl}/console/session`, { headers: { cookie } })).json()) as {
        session: { csrf_token: string };
      }
    ).session;
    const messages = (await (
      await fetch(`${f.apiUrl}/messages?destination=33612345601`, {
        headers: { cookie, 'x-csrf-token': csrf_token },
      })
    ).json()) as { messages: { campaign_id: string; text: string }[] };
    const text = messages.messages.find((m) => m.campaign_id === ticket)!.text;
    const shortUrl = /https?:\/\/\S+/.exec(text)![0];
    expect(shortUrl.startsWith(f.linkUrl)).toBe(true);

    // The recipient's phone opens the short link in its browser: redirected, it lands on the shop's page.
    const phone = await f.context({ phone: true });
    const opened = await phone.newPage();
    const landed = await opened.goto(shortUrl);
    expect(landed?.status()).toBe(200);
    expect(opened.url()).toBe(landing.url('/track/42'));
    expect(await opened.title()).toBe('Parcel 42');
    const redirect = await landed!.request().redirectedFrom()?.response();
    expect(redirect?.status()).toBe(302);
    expect(landing.requests.filter((r) => r.path === '/track/42')).toHaveLength(1);

    // The click is counted within a second (the fold); the page, done polling, reads it on Refresh.
    const clicks = page.locator('.stat', { has: page.locator('.stat-label', { hasText: /^Clicks$/ }) });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return clicks.locator('.stat-value').textContent();
      })
      .toBe('1');
    // Counted once, for the recipient who opened it; the other recipient's row says 0.
    const clicksOf = (number: string) =>
      page
        .getByRole('row', { name: new RegExp(number) })
        .locator('td[data-label="Clicks"]')
        .textContent();
    await expect.poll(() => clicksOf('33612345601')).toBe('1');
    expect(await clicksOf('33612345602')).toBe('0');
    await phone.close();
    await context.close();
  });
});
