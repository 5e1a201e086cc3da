// The console's account pages, end to end in Chromium against a whole Pigeon: API tokens shown once and
// usable, webhooks with a test event seen in the attempt log, the balance alert, and sub-accounts (credits,
// lock, their console view, and a sub-account signed in on its own that sees only its own data).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, type Envelope, startConsoleFixture } from '../helpers/browser.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

describe('console account pages', () => {
  let f: ConsoleFixture;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // The receiver listens on loopback, which the URL guard refuses unless private targets are allowed.
    f = await startConsoleFixture({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    receiver = await new WebhookReceiver().listen();
  }, 600_000);
  afterAll(async () => {
    await receiver?.close();
    await f?.close();
  });

  const apiCall = (token: string, method: string, path: string, body?: unknown) =>
    f.call(token, method, path, body);

  /** Goes to a console page through its navigation link, as a person would. */
  async function open(page: Page, link: string, heading: string) {
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: link, exact: true })
      .click();
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  }

  it('a token is shown once, opens the API, shows when it was last used, and answers -1 once revoked', async () => {
    const { email, password, token: ownToken } = await f.account({ credits: 500 });
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);
    await open(page, 'Tokens', 'API tokens');

    // Asked for what is missing, next to its field.
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect
      .poll(() => page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'))
      .toBe('true');
    await page.getByLabel('Name', { exact: true }).fill('Billing robot');
    await page.getByLabel('Lifetime in seconds (optional)').fill('soon');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('Enter a whole number of seconds').waitFor();
    await page.getByLabel('Lifetime in seconds (optional)').fill('86400');
    await page.getByLabel('Allowed IP addresses (optional)').fill('not-an-ip');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('"not-an-ip" is not an IP address or CIDR block').waitFor();
    await page.getByLabel('Allowed IP addresses (optional)').fill('127.0.0.1, 10.0.0.0/8');
    await page.getByRole('button', { name: 'Create token' }).click();

    const secret = page.locator('.secret code');
    await secret.waitFor();
    const token = (await secret.textContent())!.trim();
    expect(token.length).toBeGreaterThan(20);
    await page.getByText('It will not be shown again').waitFor();
    await page.getByRole('button', { name: /^Copy token/ }).waitFor();
    const row = page.getByRole('row', { name: /Billing robot/ });
    await row.waitFor();
    const cell = (label: string) => row.locator(`td[data-label="${label}"]`).textContent();
    expect(await cell('Allowed IPs')).toBe('127.0.0.1, 10.0.0.0/8');
    expect(await cell('Active')).toBe('active');
    expect(await cell('Last used')).toBe('never');
    await f.screenshot(page, 'tokens');

    // The token works against the API (from 127.0.0.1, which it allows)…
    expect(await apiCall(token, 'GET', '/credits')).toMatchObject({ status: 1, credits: 500 });
    // …and the page never shows it again, but says when it was used: the API's date, to the minute.
    await page.reload();
    await page.getByRole('row', { name: /Billing robot/ }).waitFor();
    expect(await page.locator('.secret').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    const listed = (await apiCall(ownToken, 'GET', '/token')).tokens as {
      name: string;
      last_used_at: string;
    }[];
    const lastUsed = listed.find((t) => t.name === 'Billing robot')!.last_used_at;
    expect(lastUsed).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(await cell('Last used')).toBe(lastUsed.slice(0, 16));

    await page.getByRole('button', { name: 'Revoke Billing robot' }).click();
    await page.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText('Token “Billing robot” revoked').waitFor();
    await expect.poll(() => page.getByRole('row', { name: /Billing robot/ }).count()).toBe(0);
    expect(await apiCall(token, 'GET', '/credits')).toMatchObject({ status: -1 });
    await context.close();
  });

  it('a webhook is created with its secret shown once, gets a test event seen in its attempt log, and pauses and resumes', async () => {
    const { email, password, token } = await f.account();
    receiver.answer = () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"ok":true}',
    });
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);
    await open(page, 'Webhooks', 'Webhooks');

    await page.getByLabel('Event type').selectOption('DLR');
    await page.getByLabel('URL').fill('ftp://example.com/x');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByText('webhook.url must be http or https, not ftp').waitFor();
    expect(await page.getByLabel('URL').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('URL').fill(receiver.url('/dlr'));
    await page.getByLabel('Signature (optional)').fill('shared-words');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secret = page.locator('.secret code');
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/^whsec_/);
    await page.getByRole('button', { name: /^Copy signing secret/ }).waitFor();
    await page.getByRole('cell', { name: receiver.url('/dlr') }).waitFor();
    await f.screenshot(page, 'webhooks');

    const listed = await apiCall(token, 'GET', '/webhook');
    const [hook] = listed.webhooks as { webhook_id: string; signature: string; status: string }[];
    expect(hook).toMatchObject({ signature: 'shared-words', status: 'live' });

    await page.getByRole('link', { name: 'Open the webhook' }).click();
    await page.getByRole('heading', { name: `Webhook ${hook.webhook_id}`, level: 1 }).waitFor();
    await page.getByText('No attempts yet').waitFor();
    const before = receiver.requests.length;
    await page.getByRole('button', { name: 'Send a test event' }).click();
    // The page reads its log again until the dispatcher's attempt shows.
    const attempt = page.locator('tbody.webhook-attempt').first();
    await attempt.waitFor({ timeout: 20_000 });
    expect(await attempt.getByRole('cell').nth(3).textContent()).toBe('200');
    expect(await attempt.textContent()).toContain('DLR (test)');
    expect(receiver.requests.length).toBe(before + 1);
    const received = receiver.requests[before];
    expect(received.headers['x-smsfactor-signature']).toBe('shared-words');

    // What was sent and answered, as the receiver saw it.
    await attempt.getByText('Request and answer').click();
    const exchange = attempt.locator('.webhook-exchange');
    await exchange.getByRole('heading', { name: 'Request' }).waitFor();
    expect(await exchange.textContent()).toContain(received.headers['webhook-id'] as string);
    expect(await exchange.locator('pre').first().textContent()).toBe(
      JSON.stringify(JSON.parse(received.body), null, 2),
    );
    expect(await exchange.locator('pre').nth(1).textContent()).toBe('{\n  "ok": true\n}');
    await page.getByText('HTTP 200').first().waitFor();
    await f.screenshot(page, 'webhook');

    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByText('This webhook is paused').waitFor();
    expect(await page.getByRole('button', { name: 'Send a test event' }).isDisabled()).toBe(true);
    expect((await apiCall(token, 'GET', `/webhook/${hook.webhook_id}`)).webhook).toMatchObject({
      status: 'paused',
    });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByText('Live again').waitFor();
    expect((await apiCall(token, 'GET', `/webhook/${hook.webhook_id}`)).webhook).toMatchObject({
      status: 'live',
      last_http_code: '200',
    });

    // On a phone the log's rows become cards and nothing overflows the screen.
    const phone = await f.context({ phone: true });
    const phonePage = await phone.newPage();
    await phonePage.goto(`/console/webhooks/${hook.webhook_id}`);
    await phonePage.getByLabel('E-mail').fill(email);
    await phonePage.getByLabel('Password').fill(password);
    await phonePage.getByRole('button', { name: 'Sign in' }).click();
    await phonePage.locator('tbody.webhook-attempt').first().getByText('Request and answer').click();
    await phonePage.getByRole('heading', { name: 'Answer' }).waitFor();
    expect(
      await phonePage.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await f.screenshot(phonePage, 'webhook-phone');
    await phone.close();

    // Its settings change through PUT /webhook/:id.
    await page.getByLabel('Event type').selectOption('MO');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Changes saved.').waitFor();
    expect((await apiCall(token, 'GET', `/webhook/${hook.webhook_id}`)).webhook).toMatchObject({
      type: 'MO',
    });

    // The list shows its last answer; deleting asks first.
    await open(page, 'Webhooks', 'Webhooks');
    const row = page.getByRole('row', { name: new RegExp(receiver.url('/dlr').replace(/[/.:]/g, '\\$&')) });
    expect(await row.textContent()).toContain('HTTP 200');
    await page.getByRole('button', { name: `Delete webhook ${hook.webhook_id}` }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('No webhooks yet').waitFor();
    expect((await apiCall(token, 'GET', '/webhook')).webhooks).toEqual([]);
    await context.close();
  });

  it('the balance alert is saved and read back through the API, with errors next to their field', async () => {
    const { email, password, token } = await f.account({ credits: 800 });
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);
    await open(page, 'Balance alert', 'Balance alert');

    await page.getByLabel('Trigger (credits)').fill('250');
    await page.getByLabel('Send an e-mail').check();
    await page.getByLabel('E-mail address').fill('not an address');
    await page.getByLabel('Send an SMS').check();
    await page.getByLabel('Mobile number').fill('+33 6 12 34 56 78');
    await page.getByRole('button', { name: 'Save the alert' }).click();
    await page.getByText('notification.email "not an address" is not a valid address').waitFor();
    expect(await page.getByLabel('E-mail address').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('E-mail address').fill('finance@example.com');
    await page.getByRole('button', { name: 'Save the alert' }).click();
    await page.getByText('You will be warned when the balance reaches 250 credits.').waitFor();
    expect(await apiCall(token, 'GET', '/notification/balance')).toMatchObject({
      status: 1,
      notification: {
        alert_trigger: '250',
        alert_email: '1',
        alert_gsm: '1',
        email: 'finance@example.com',
        phone_number: '33612345678',
      },
    });
    await f.screenshot(page, 'alert');

    // A reload shows what is stored; turning the SMS off is saved too.
    await page.reload();
    await page.getByRole('heading', { name: 'Balance alert', level: 1 }).waitFor();
    expect(await page.getByLabel('Trigger (credits)').inputValue()).toBe('250');
    expect(await page.getByLabel('Send an SMS').isChecked()).toBe(true);
    await page.getByLabel('Send an SMS').uncheck();
    await page.getByRole('button', { name: 'Save the alert' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await apiCall(token, 'GET', '/notification/balance')).notification).toMatchObject({
      alert_gsm: '0',
      phone_number: '33612345678',
    });
    await context.close();
  });

  it('sub-accounts: create one, transfer credits, lock and unlock it, open its console and come back; signed in on its own it sees only its data', async () => {
    const parent = await f.account({ credits: 1000 });
    const subEmail = `sub-${Date.now().toString(36)}@example.com`;
    const subPassword = 'another long password';
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, parent.email, parent.password);
    await open(page, 'Sub-accounts', 'Sub-accounts');
    await page.getByText('No sub-accounts yet').waitFor();

    await page.getByLabel('E-mail').fill(subEmail);
    await page.getByLabel('Password').fill('short');
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Lovelace');
    await page.getByLabel('Company').fill('Analytical Ltd');
    await page.getByRole('button', { name: 'Create sub-account' }).click();
    await page.getByText(/account\.password must have at least \d+ characters/).waitFor();
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Password').fill(subPassword);
    await page.getByRole('button', { name: 'Create sub-account' }).click();
    await page.getByText(`Sub-account ${subEmail} created`).waitFor();
    const subs = await apiCall(parent.token, 'GET', '/sub-accounts');
    const [sub] = subs['sub-accounts'] as { client_id: string; firstname: string; company: string }[];
    expect(sub).toMatchObject({ firstname: 'Ada', company: 'Analytical Ltd' });
    const row = () => page.getByRole('row', { name: new RegExp(subEmail.replace(/\./g, '\\.')) });
    await row().waitFor();
    expect(await row().textContent()).toContain('Ada Lovelace');

    // Credits go to it, and the page shows both balances after; too many is refused next to the amount.
    await page.getByLabel('Sub-account', { exact: true }).selectOption(sub.client_id);
    await page.getByLabel('Credits', { exact: true }).fill('5000');
    await page.getByRole('button', { name: 'Transfer' }).click();
    await page.getByRole('alert').filter({ hasText: 'credits' }).first().waitFor();
    expect(await page.getByLabel('Credits', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Credits', { exact: true }).fill('300');
    await page.getByRole('button', { name: 'Transfer' }).click();
    await expect.poll(() => page.getByTestId('my-balance').textContent()).toBe('700 credits');
    expect(await page.getByTestId('sub-balance').textContent()).toBe('300 credits');
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('700 credits');
    await page.getByLabel('Credits', { exact: true }).fill('-50');
    await page.getByRole('button', { name: 'Transfer' }).click();
    await expect.poll(() => page.getByTestId('sub-balance').textContent()).toBe('250 credits');
    expect(await page.getByTestId('my-balance').textContent()).toBe('750 credits');
    await expect.poll(() => row().locator('td[data-label="Credits"]').textContent()).toBe('250');

    // Lock and unlock, each asked first.
    await page.getByRole('button', { name: `Lock ${subEmail}` }).click();
    await page.getByRole('button', { name: 'Yes, lock' }).click();
    await page.getByText(`${subEmail} is locked`).waitFor();
    await expect.poll(() => row().locator('td[data-label="State"]').textContent()).toBe('locked');
    const locked = await apiCall(parent.token, 'GET', `/sub-accounts/${sub.client_id}`);
    expect(locked['sub-account']).toMatchObject({ state: 'locked' });
    await page.getByRole('button', { name: `Unlock ${subEmail}` }).click();
    await page.getByRole('button', { name: 'Yes, unlock' }).click();
    await page.getByText(`${subEmail} is unlocked`).waitFor();
    expect(
      (await apiCall(parent.token, 'GET', `/sub-accounts/${sub.client_id}`))['sub-account'],
    ).toMatchObject({
      state: 'active',
    });
    await f.screenshot(page, 'sub-accounts');

    // A campaign each, through the API: the parent's and the sub-account's (with a token the parent made it).
    const subToken = (await apiCall(parent.token, 'POST', `/token/account/${sub.client_id}`, {
      token: { name: 'sub sender' },
    })) as Envelope & { token: string };
    const send = (token: string, text: string) =>
      apiCall(token, 'POST', '/send', {
        sms: { message: { text, pushtype: 'alert' }, recipients: { gsm: [{ value: '33612345678' }] } },
      });
    const parentSend = (await send(parent.token, 'Parent only campaign')) as Envelope & { ticket: string };
    expect(parentSend.status).toBe(1);
    expect((await send(subToken.token, 'Sub-account campaign')).status).toBe(1);

    // Its console view: its balance and its campaigns, not the parent's; then back.
    await page.getByRole('button', { name: `Open this account's console: ${subEmail}` }).click();
    await page.getByRole('button', { name: 'Back to my account' }).waitFor();
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('249 credits');
    await open(page, 'Campaigns', 'Campaigns');
    await page.getByText('Sub-account campaign').waitFor();
    expect(await page.getByText('Parent only campaign').count()).toBe(0);
    await open(page, 'Sub-accounts', 'Sub-accounts');
    await page.getByText('You are looking at a sub-account').waitFor();
    await page.getByRole('button', { name: 'Back to my account' }).click();
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('749 credits');
    await open(page, 'Sub-accounts', 'Sub-accounts');
    await row().waitFor();
    await context.close();

    // Signed in on its own, with its password: only its own data.
    const own = await f.context();
    const subPage = await own.newPage();
    await f.signIn(subPage, subEmail, subPassword);
    expect(await subPage.getByTestId('balance').textContent()).toBe('249 credits');
    await open(subPage, 'Campaigns', 'Campaigns');
    await subPage.getByText('Sub-account campaign').waitFor();
    expect(await subPage.getByText('Parent only campaign').count()).toBe(0);
    // Asked from its page with its session and CSRF token, as the page's own calls are.
    const foreign = await subPage.evaluate(async (ticket) => {
      const session = (await (await fetch('/console/session')).json()) as { session: { csrf_token: string } };
      const r = await fetch(`/campaign/${ticket}`, {
        headers: { accept: 'application/json', 'x-csrf-token': session.session.csrf_token },
      });
      return (await r.json()) as { status: number };
    }, parentSend.ticket);
    expect(foreign.status).toBe(-5);
    await open(subPage, 'Sub-accounts', 'Sub-accounts');
    await subPage.getByText('This is a sub-account: sub-accounts cannot have sub-accounts').waitFor();
    await own.close();

    // The page on a phone.
    const phone = await f.context({ phone: true });
    const phonePage = await phone.newPage();
    // Signed in by hand: on a phone the navigation is folded behind the Menu button, so f.signIn, which
    // waits for it to be visible, would not see it.
    await phonePage.goto('/console/sub-accounts');
    await phonePage.getByLabel('E-mail').fill(parent.email);
    await phonePage.getByLabel('Password').fill(parent.password);
    await phonePage.getByRole('button', { name: 'Sign in' }).click();
    await phonePage.getByRole('button', { name: 'Menu' }).waitFor();
    await phonePage.getByRole('heading', { name: 'Sub-accounts', level: 1 }).waitFor();
    await phonePage.getByText(subEmail).first().waitFor();
    const overflow = await phonePage.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await f.screenshot(phonePage, 'sub-accounts-phone');
    await phone.close();
  });
});
