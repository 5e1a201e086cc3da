// A marketer's whole path through the console, with nothing done through the API by hand: sign in, write a
// campaign with a tracked link in the send form, watch it reach "delivered" on its page (the carrier
// simulator delivers every message), follow the short link from a phone's browser, and see the click.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';

describe('the console, from the send form to a click', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture();
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  it('sends from the form, shows the campaign delivered, and counts a click on its short link', async () => {
    const { email, password } = await f.account({ credits: 100 });
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);

    await page.getByRole('link', { name: 'Send', exact: true }).click();
    await page.getByLabel('Text').fill('Your parcel is on its way: <-short->');
    await page.getByLabel('Short link URL').fill('https://example.com/track/42');
    await page.getByLabel('Numbers', { exact: true }).fill('33612345601\n33612345602');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/console\/campaigns\/\d+$/);

    // Delivered on the page itself, without a reload.
    await expect
      .poll(() => page.getByTestId('funnel-delivered').textContent(), { timeout: 20_000 })
      .toMatch(/^2\b/);
    await expect.poll(() => page.locator('td .state-delivered').count()).toBe(2);
    await expect.poll(() => page.getByTestId('balance').textContent()).toContain('98');

    // The recipient's phone opens the short link its message carries: a real redirect to the long URL.
    const ticket = page.url().split('/').pop()!;
    const session = await context.cookies();
    const headers = { cookie: `pigeon_session=${session[0].value}` };
    const messages = (await (
      await fetch(`${f.apiUrl}/messages?destination=33612345601`, { headers })
    ).json()) as { messages: { campaign_id: string; text: string }[] };
    const text = messages.messages.find((m) => m.campaign_id === ticket)!.text;
    const shortUrl = /https?:\/\/\S+/.exec(text)![0];
    expect(shortUrl.startsWith(f.linkUrl)).toBe(true);
    const phone = await f.context({ phone: true });
    const opened = await phone.newPage();
    const redirected = await opened.request.get(shortUrl, { maxRedirects: 0 });
    expect(redirected.status()).toBe(302);
    expect(redirected.headers().location).toBe('https://example.com/track/42');

    // The click is counted within a second (the fold); the page, done polling, reads it on Refresh.
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return page.locator('.stat', { hasText: 'Clicks' }).textContent();
      })
      .toContain('1');
    await expect.poll(() => page.getByRole('row', { name: /33612345601/ }).textContent()).toMatch(/1$/);
    await phone.close();
    await context.close();
  });
});
