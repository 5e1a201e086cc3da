// The console's campaign pages, end to end: campaigns sent through the API with a token, then read in the
// browser as the account's owner sees them: the dashboard's balance and charts, the campaigns list and its
// filters, one campaign followed live to delivery, a click on its short link, its replies and STOPs,
// cancelling a scheduled campaign with its refund, and dates in the account's zone in a browser elsewhere.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';

const browserAgent =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

interface SendAnswer {
  status: number;
  ticket: string;
  cost: number;
  credits: number;
  details?: string;
}

describe('console campaign pages', () => {
  let f: ConsoleFixture;
  let numbers = 0;
  /** A French mobile number no other test of this file writes to, so replies find their campaign. */
  const nextNumber = () => `3361234${String(1000 + ++numbers).slice(-4)}`;

  beforeAll(async () => {
    f = await startConsoleFixture();
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  async function call<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${f.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as T;
  }

  async function send(
    token: string,
    message: Record<string, unknown>,
    recipients: string[],
  ): Promise<SendAnswer> {
    const answer = await call<SendAnswer>(token, 'POST', '/send', {
      sms: {
        message,
        recipients: { gsm: recipients.map((value, i) => ({ value, gsmsmsid: `r${i + 1}` })) },
      },
    });
    expect(answer, answer.details).toMatchObject({ status: 1 });
    return answer;
  }

  async function campaignOf(token: string, ticket: string) {
    const answer = await call<{
      campaign: { status: string; state: string; clicks: number; delivered: number }[];
    }>(token, 'GET', `/campaign/${ticket}`);
    return answer.campaign[0];
  }

  /** `Y-m-d H:i:s` on the wall clock of the API's time zone, `ms` from now: a `delay`. */
  function delayIn(ms: number): string {
    return new Date(Date.now() + ms)
      .toLocaleString('sv-SE', { timeZone: f.deps.config.TIMEZONE, hourCycle: 'h23' })
      .slice(0, 19);
  }

  const progress = (page: Page) => page.getByRole('progressbar', { name: 'Delivery progress' });
  /** The value of the figure (`.stat`) whose label is exactly `label`. */
  const statValue = (page: Page, label: string) =>
    page
      .locator('.stat', { has: page.locator('.stat-label').getByText(label, { exact: true }) })
      .locator('.stat-value')
      .textContent();

  it('the dashboard shows the balance, 30 days of sending and the latest campaigns; the list filters by text', async () => {
    const { id: accountId, email, password, token } = await f.account({ credits: 1000 });
    const sale = await send(
      token,
      {
        text: 'Spring sale: 20 % off everything this week <-short->',
        pushtype: 'marketing',
        links: ['https://shop.example.com/spring'],
      },
      [nextNumber(), nextNumber(), nextNumber()],
    );
    const alert = await send(token, { text: 'Server alert: disk almost full on db-1' }, [nextNumber()]);
    await expect
      .poll(
        async () => [
          (await campaignOf(token, sale.ticket)).state,
          (await campaignOf(token, alert.ticket)).state,
        ],
        {
          timeout: 15_000,
        },
      )
      .toEqual(['done', 'done']);
    const balance = 1000 - sale.cost - alert.cost;

    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await expect.poll(() => statValue(page, 'Balance (credits)')).toBe(balance.toLocaleString('en-US'));
    // Both charts plot today's four messages: uPlot has drawn its canvas, and the totals say what it plots.
    for (const name of [/^Messages sent per day/, /^Delivery rate per day/]) {
      await page.getByRole('img', { name }).locator('canvas').first().waitFor();
    }
    await expect.poll(() => statValue(page, 'Messages sent, last 30 days')).toBe('4');
    await expect.poll(() => statValue(page, 'Delivery rate, last 30 days')).toBe('100 %');
    // The latest campaigns, newest first, each with its progress and a link to its page.
    const latest = page.locator('.latest-campaign');
    await expect.poll(() => latest.count()).toBe(2);
    expect(await latest.first().textContent()).toContain('Server alert');
    expect(
      await page
        .getByRole('progressbar', { name: `Progress of campaign ${sale.ticket}` })
        .getAttribute('aria-valuenow'),
    ).toBe('100');
    expect(await page.getByRole('link', { name: 'Send a campaign' }).getAttribute('href')).toBe(
      '/console/send',
    );
    await f.screenshot(page, 'dashboard');
    // No limit of its own and none from the instance: no limits line. With some, it says them.
    expect(await page.getByTestId('account-limits').count()).toBe(0);
    await f.deps.services.limits.set('cli', accountId, { daily_messages: 500, countries: 'FR' });
    await page.reload();
    await expect
      .poll(() => page.getByTestId('account-limits').textContent())
      .toBe('Limits: 500 messages a day · recipients in FR only.');

    // On a phone the navigation is folded behind the menu button, so the dashboard's heading says it is in.
    const phone = await (await f.context({ phone: true })).newPage();
    await phone.goto('/console');
    await phone.getByLabel('E-mail').fill(email);
    await phone.getByLabel('Password').fill(password);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await phone
      .getByRole('img', { name: /^Delivery rate per day/ })
      .locator('canvas')
      .first()
      .waitFor();
    await phone.locator('.latest-campaign').nth(1).waitFor();
    // Nothing is wider than the phone's screen.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await f.screenshot(phone, 'dashboard-phone');
    await phone.context().close();

    // The list: both campaigns, then only the one whose text holds "sale", kept in the address.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
    const rows = page.locator('table tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    await f.screenshot(page, 'campaigns');
    await page.getByLabel('Text contains').fill('SALE');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole('link', { name: sale.ticket, exact: true }).waitFor();
    expect(await rows.first().textContent()).toContain('Spring sale');
    expect(new URL(page.url()).searchParams.get('text')).toBe('SALE');
    await page.reload();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await page.getByLabel('Text contains').inputValue()).toBe('SALE');
    await page.goBack();
    await expect.poll(() => rows.count()).toBe(2);
    // A bad number is told next to its field, in the API's words.
    await page.getByLabel('Sent to number').fill('not a number');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => page.locator('.field', { hasText: 'Sent to number' }).locator('.field-error').textContent())
      .toContain('international format');
    await context.close();
  });

  it('the campaign page follows a campaign to delivery without a reload, then shows its clicks, replies and STOPs', async () => {
    const { email, password, token } = await f.account({ credits: 1000 });
    const recipients = [nextNumber(), nextNumber(), nextNumber()];
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);

    // Due in a few seconds: the page first sees it scheduled, then follows it out.
    const sent = await send(
      token,
      {
        text: 'Your parcel is on its way: <-short->',
        links: ['https://track.example.com/parcel/123'],
        delay: delayIn(6_000),
      },
      recipients,
    );
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('link', { name: sent.ticket, exact: true }).click();
    await page.getByRole('heading', { name: `Campaign ${sent.ticket}` }).waitFor();
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    expect(await page.locator('.page-title .state').textContent()).toBe('scheduled');
    expect(await progress(page).getAttribute('aria-valuenow')).toBe('0');

    await expect.poll(() => progress(page).getAttribute('aria-valuenow'), { timeout: 20_000 }).toBe('100');
    await expect.poll(() => page.getByTestId('funnel-delivered').textContent()).toMatch(/^3\b/);
    await expect.poll(() => page.locator('.page-title .state').textContent()).toBe('done');
    await expect.poll(() => page.locator('td .state-delivered').count()).toBe(3);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(
      true,
    );
    expect(await statValue(page, 'Delivered')).toBe('3');

    // One recipient follows the link in the text they received (the history holds each message's final text).
    const history = await call<{ messages: { campaign_id: string; destination: string; text: string }[] }>(
      token,
      'GET',
      '/messages',
    );
    const first = history.messages.find(
      (m) => m.campaign_id === sent.ticket && m.destination === recipients[0],
    );
    // The fixture's LINK_BASE_URL names the port it was configured with (0); the code is what matters.
    const code = first?.text.match(/https?:\/\/\S+\/([0-9A-Za-z]+)/)?.[1];
    expect(code, JSON.stringify(first)).toMatch(/^[0-9A-Za-z]+$/);
    const click = await fetch(`${f.linkUrl}/${code}`, {
      redirect: 'manual',
      headers: { 'user-agent': browserAgent },
    });
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe('https://track.example.com/parcel/123');
    await expect.poll(async () => (await campaignOf(token, sent.ticket)).clicks).toBe(1);
    // And two replies come back from another: a question, then a STOP.
    for (const text of ['Can I pick it up myself?', 'STOP']) {
      await f.deps.services.replies.recordInbound({ from: recipients[1], to: 'SIMULATOR', text });
    }

    // The campaign is done, so the page no longer polls: Refresh reads it again.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => statValue(page, 'Clicks')).toBe('1');
    await page
      .getByRole('img', { name: /^Clicks per hour/ })
      .locator('canvas')
      .first()
      .waitFor();
    const clicked = page.locator('tr', { hasText: recipients[0] }).first();
    await expect.poll(() => clicked.locator('td.num').textContent()).toBe('1');
    const replies = page.getByRole('region', { name: 'Replies' });
    await replies.getByRole('cell', { name: 'Can I pick it up myself?' }).waitFor();
    const stops = page.getByRole('region', { name: 'STOPs' });
    await stops.getByRole('cell', { name: recipients[1] }).waitFor();
    expect(await statValue(page, 'STOPs')).toBe('1');

    // The messages table filters by state, shown by name.
    await page.getByLabel('State').selectOption({ label: 'expired' });
    await page.getByText('No message in this state.').waitFor();
    await page.getByLabel('State').selectOption({ label: 'delivered' });
    await expect.poll(() => page.locator('td .state-delivered').count()).toBe(3);
    // A finished campaign cannot be cancelled: the page does not offer it.
    expect(await page.getByRole('button', { name: 'Cancel campaign' }).count()).toBe(0);
    await f.screenshot(page, 'campaign');

    // On a phone, the page fits the screen: wide tables scroll inside their own box.
    const phone = await (await f.context({ phone: true })).newPage();
    await phone.goto('/console');
    await phone.getByLabel('E-mail').fill(email);
    await phone.getByLabel('Password').fill(password);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await phone.goto(`/console/campaigns/${sent.ticket}`);
    await phone
      .getByRole('img', { name: /^Clicks per hour/ })
      .locator('canvas')
      .first()
      .waitFor();
    await phone.getByRole('region', { name: 'STOPs' }).getByRole('cell', { name: recipients[1] }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await f.screenshot(phone, 'campaign-phone');
    await phone.goto('/console/campaigns');
    await phone.locator('table tbody tr').first().waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await f.screenshot(phone, 'campaigns-phone');
    await phone.context().close();
    await context.close();
  });

  it('a scheduled campaign is cancelled from its page after a confirmation, and its cost comes back', async () => {
    const { email, password, token } = await f.account({ credits: 500 });
    const later = await send(
      token,
      { text: 'Reminder: your appointment is tomorrow at 10:00', delay: delayIn(2 * 24 * 3_600_000) },
      [nextNumber(), nextNumber()],
    );
    expect(later.credits).toBe(500 - later.cost);
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);
    expect(await page.getByTestId('balance').textContent()).toBe(`${500 - later.cost} credits`);
    await page.goto(`/console/campaigns/${later.ticket}`);
    await page.getByRole('heading', { name: `Campaign ${later.ticket}` }).waitFor();

    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    // The first click only asks; keeping it changes nothing.
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect((await campaignOf(token, later.ticket)).state).toBe('scheduled');
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    await page.getByRole('button', { name: 'Yes, cancel it' }).click();

    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Campaign cancelled' }).textContent())
      .toContain(`${later.cost} credits refunded`);
    await expect.poll(() => page.locator('.page-title .state').textContent()).toBe('cancelled');
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('500 credits');
    expect(await page.getByRole('button', { name: 'Cancel campaign' }).count()).toBe(0);
    expect((await campaignOf(token, later.ticket)).state).toBe('cancelled');
    expect(await call(token, 'GET', '/credits')).toMatchObject({ credits: 500 });
    await context.close();
  });
  it('the page polls an unfinished campaign every 2 s, and stops once it is done or once the page is left', async () => {
    const { email, password, token } = await f.account({ credits: 100 });
    const later = await send(token, { text: 'Next week', delay: delayIn(7 * 24 * 3_600_000) }, [
      nextNumber(),
    ]);
    const now = await send(token, { text: 'Right now' }, [nextNumber()]);
    const context = await f.context();
    const page = await context.newPage();
    // The page's timers run on a clock the test moves: polling is counted without waiting for it.
    await page.clock.install();
    const reads = new Map<string, number>();
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      reads.set(path, (reads.get(path) ?? 0) + 1);
    });
    const readsOf = (ticket: string) => reads.get(`/campaign/${ticket}`) ?? 0;
    /** Moves the clock, then makes one more call and waits for it, so any read the timers started is seen. */
    const advance = async (ms: number) => {
      await page.clock.runFor(ms);
      await page.evaluate(() => fetch('/credits').then((r) => r.text()));
    };
    await f.signIn(page, email, password);

    await page.goto(`/console/campaigns/${later.ticket}`);
    // The heading shows while the first read is under way too; the Refresh button only once it answered, so
    // that read is counted before the count is taken.
    await page.getByRole('heading', { name: `Campaign ${later.ticket}` }).waitFor();
    await page.getByRole('button', { name: 'Refresh' }).waitFor();
    const first = readsOf(later.ticket);
    await advance(2_000);
    await expect.poll(() => readsOf(later.ticket)).toBe(first + 1);
    await advance(2_000);
    await expect.poll(() => readsOf(later.ticket)).toBe(first + 2);
    // Leaving the page (inside the console, no reload) ends its polling.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
    const left = readsOf(later.ticket);
    await advance(20_000);
    expect(readsOf(later.ticket)).toBe(left);

    // A campaign that is done is read no more.
    await page.getByRole('link', { name: now.ticket, exact: true }).click();
    await expect
      .poll(async () => {
        await advance(2_000);
        return page.locator('.page-title .state').textContent();
      })
      .toBe('done');
    const done = readsOf(now.ticket);
    await advance(20_000);
    expect(readsOf(now.ticket)).toBe(done);
    await context.close();
  });

  it("dates show on the account's zone (TIMEZONE, Europe/Paris) in a browser set to America/Los_Angeles", async () => {
    const serverZone = f.deps.config.TIMEZONE;
    const browserZone = 'America/Los_Angeles';
    expect(serverZone).toBe('Europe/Paris');
    const { email, password, token } = await f.account({ credits: 100 });
    const wallClock = (ms: number, timeZone: string) =>
      new Date(ms).toLocaleString('sv-SE', { timeZone, hourCycle: 'h23' }).slice(0, 16);
    // Due at 09:30 in Paris, in two days: 00:30 that day in Los Angeles, which a browser-local rendering shows.
    const dueDay = new Date(Date.now() + 2 * 24 * 3_600_000)
      .toLocaleString('sv-SE', { timeZone: serverZone })
      .slice(0, 10);
    const later = await send(token, { text: 'Doors open at 09:30', delay: `${dueDay} 09:30:00` }, [
      nextNumber(),
    ]);
    const campaign = (
      await call<{ campaign: { date: string; creation_date: string }[] }>(
        token,
        'GET',
        `/campaign/${later.ticket}`,
      )
    ).campaign[0];
    expect(campaign.date).toBe(`${dueDay} 09:30:00`);

    // The fixture's contexts run in the server's zone; this one is a browser elsewhere.
    const context = await f.browser.newContext({
      baseURL: f.apiUrl,
      viewport: { width: 1280, height: 860 },
      timezoneId: browserZone,
    });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    expect(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe(browserZone);
    await f.signIn(page, email, password);

    // The campaign's page: due and created on Paris's wall clock, as the API gives them.
    await page.goto(`/console/campaigns/${later.ticket}`);
    await page.getByRole('heading', { name: `Campaign ${later.ticket}` }).waitFor();
    const fact = (label: string) =>
      page
        .locator('.campaign-facts div', { has: page.locator('dt').getByText(label, { exact: true }) })
        .locator('dd')
        .textContent();
    expect(await fact('Due')).toBe(`${dueDay} 09:30 (${serverZone})`);
    expect(await fact('Created')).toBe(campaign.creation_date.slice(0, 16));
    // Its message, due with it.
    const message = page.locator('td[data-label="Due"]').first();
    await expect.poll(() => message.textContent()).toBe(`${dueDay} 09:30`);

    // The campaigns list and the dashboard's latest campaigns say the same.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Campaigns' }).click();
    const row = page.getByRole('row', { name: new RegExp(later.ticket) });
    await expect.poll(() => row.locator('td[data-label="Date"]').textContent()).toBe(`${dueDay} 09:30`);

    // The send form's earliest "Send at" is now on Paris's wall clock, not the browser's.
    await page.goto('/console/send');
    const before = Date.now();
    const min = await page.getByLabel(`Send at (${serverZone})`).getAttribute('min');
    const after = Date.now();
    expect(
      [wallClock(before, serverZone), wallClock(after, serverZone)].map((w) => w.replace(' ', 'T')),
    ).toContain(min);
    expect(min).not.toBe(wallClock(before, browserZone).replace(' ', 'T'));
    await context.close();
  });
});
