// The console's audit log page, end to end: changes made through the API with a token and in the console, a
// failed sign-in, then the page as the account's owner reads it: newest first, who and from where, filtered by
// action and actor (kept in the address), a bad period named beside its field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';

describe('console audit log page', () => {
  let f: ConsoleFixture;

  beforeAll(async () => {
    f = await startConsoleFixture();
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  it('lists the changes and sign-ins, newest first, and filters them by action and actor', async () => {
    const { email, password, token } = await f.account({ credits: 100 });
    const sent = await fetch(`${f.apiUrl}/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sms: {
          message: { text: 'Audit me', sender: 'Pigeon' },
          recipients: { gsm: [{ value: '33612349001' }] },
        },
      }),
    });
    expect(((await sent.json()) as { status: number }).status).toBe(1);

    const context = await f.context();
    const page = await context.newPage();
    // A wrong password first: recorded on the account its e-mail names.
    await page.goto('/console');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await f.signIn(page, email, password);

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const rows = page.locator('.audit-table tbody tr');
    // Newest first: the sign-in, the failed one, the send (by the token), the account's creation (the CLI's
    // service, run here outside any request: Pigeon's).
    await expect.poll(() => rows.count()).toBe(4);
    const actions = async () => rows.locator('td[data-label="Action"]').allTextContents();
    expect(await actions()).toEqual([
      'session.sign_in',
      'session.sign_in_failed',
      'campaign.send',
      'account.create',
    ]);
    const send = rows.nth(2);
    expect(await send.locator('td[data-label="Who"]').textContent()).toBe('Token default');
    expect(await send.locator('td[data-label="Address"]').textContent()).toBe('127.0.0.1');
    expect(await rows.nth(0).locator('td[data-label="Who"]').textContent()).toBe(email);
    await f.screenshot(page, 'audit-log');

    // By actor: the token's entries only; the filter is in the address.
    await page.getByLabel('Actor').selectOption('token');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => actions()).toEqual(['campaign.send']);
    expect(new URL(page.url()).searchParams.get('actor')).toBe('token');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    // By action family: the sessions'.
    await page.getByLabel('Action').fill('session');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => actions()).toEqual(['session.sign_in', 'session.sign_in_failed']);
    // A period ending before it starts: the API's -7, shown beside the date that names it.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByLabel('From date').fill('2026-03-10');
    await page.getByLabel('To date').fill('2026-03-01');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText(/date_end "2026-03-01" is before date_start/).waitFor();
  });
});
