// An invited user's first visit, in Chromium against a whole Pigeon: the link's page sets the password (a
// common one refused, the link kept), then the user signs in with it and the console shows its account; the
// same link used again is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';

describe('console invitation', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture();
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  it("an invitation's link sets the password once; the user then signs in as a viewer", async () => {
    const owner = await f.account({ credits: 321 });
    const email = `viewer-${Date.now()}@example.com`;
    const added = await f.deps.services.users.operatorAdd(owner.id, email, 'viewer');
    const token = new URL(added.link).searchParams.get('token')!;
    const context = await f.context();
    const page = await context.newPage();
    await page.goto(`/console/accept?token=${token}`);
    await page.getByRole('heading', { name: 'Set your Pigeon password' }).waitFor();

    await page.getByLabel('New password').fill('password123');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('most common passwords');

    const password = 'the viewer chose this one';
    await page.getByLabel('New password').fill(password);
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByRole('heading', { name: 'Your password is set' }).waitFor();
    await f.screenshot(page, 'invitation-accepted');
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    expect(await page.getByTestId('balance').textContent()).toBe('321 credits');
    // The session the page reads names its user and role.
    const session = await page.evaluate(async () => (await fetch('/console/session')).json());
    expect(session).toMatchObject({ status: 1, session: { email, role: 'viewer', account_id: owner.id } });

    // The link worked once.
    const again = await context.newPage();
    await again.goto(`/console/accept?token=${token}`);
    await again.getByLabel('New password').fill('yet another password');
    await again.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => again.getByRole('alert').textContent()).toContain('already used');
    await context.close();
  });
});
