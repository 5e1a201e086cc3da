// The console for the users of one account, in Chromium against a whole Pigeon with a real SMTP sink: a viewer,
// a sender and an owner each see the pages and controls their role opens and not the others, and a page their
// role cannot open says so; the owner invites a user by e-mail, who sets a password through the link and signs
// in with its role; the owner changes that role, and the user's open page loses the rights at its next request;
// the last owner's refusal and a missing SMTP server are shown in the API's words.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/shared/auth-context.ts';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';
import { waitFor } from '../helpers/wait.ts';

const userPassword = 'a team member password';

/** The pages each role finds in the navigation (the server's permission table decides; this is its outcome). */
const everyPage = [
  'Dashboard',
  'Campaigns',
  'Send',
  'Lists',
  'Blacklist',
  'Tokens',
  'SMPP',
  'Webhooks',
  'Balance alert',
  'Sub-accounts',
  'Users',
  'Audit log',
  'Sender IDs',
  'Profile',
];
const withoutSendOrUsers = everyPage.filter((p) => p !== 'Send' && p !== 'Users');

const navLinks = (page: Page) => page.getByRole('navigation', { name: 'Console' }).getByRole('link');
const navLink = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

async function open(page: Page, link: string, heading: string) {
  await navLink(page, link).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

describe('console for teams', () => {
  let f: ConsoleFixture;
  const sink = new SmtpSink();
  beforeAll(async () => {
    await sink.listen();
    f = await startConsoleFixture({ SMTP_URL: sink.url(), SMTP_FROM: 'pigeon@example.com' });
  }, 600_000);
  afterAll(async () => {
    await f?.close();
    await sink.close();
  });

  /** An account with one list and one campaign due in two days, made with its token. */
  async function accountWithList() {
    const account = await f.account({ credits: 500 });
    const list = await f.call(account.token, 'POST', '/list', {
      list: {
        name: 'Shop customers',
        contacts: { gsm: [{ value: '33612345678' }, { value: '33612345679' }] },
      },
    });
    expect(list).toMatchObject({ status: 1 });
    // Due in two days, on the wall clock of the API's time zone (`delay` is `Y-m-d H:i:s`).
    const delay = new Date(Date.now() + 2 * 24 * 3_600_000)
      .toLocaleString('sv-SE', { timeZone: f.deps.config.TIMEZONE, hourCycle: 'h23' })
      .slice(0, 19);
    const later = await f.call(account.token, 'POST', '/send', {
      sms: { message: { text: 'See you tomorrow', delay }, recipients: { gsm: [{ value: '33612345680' }] } },
    });
    expect(later).toMatchObject({ status: 1 });
    return { ...account, ticket: String(later.ticket) };
  }

  /** A user of the account with this role, added by the operator's service, its password set by its link. */
  async function userOf(accountId: number, role: Role) {
    const email = `${role}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}@example.com`;
    const added = await f.deps.services.users.operatorAdd(accountId, email, role);
    const token = new URL(added.link).searchParams.get('token');
    const accepted = await fetch(`${f.apiUrl}/users/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: { token, password: userPassword } }),
    });
    expect(await accepted.json()).toMatchObject({ status: 1, user: { email, role } });
    return email;
  }

  /** A user of this role of a new account with one list, signed in to the console, its role in the top bar. */
  async function signedInAs(role: Role) {
    const account = await accountWithList();
    const email = await userOf(account.id, role);
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, userPassword);
    expect(await page.getByTestId('user').textContent()).toBe(`${email} ${role}`);
    return { context, page, ticket: account.ticket };
  }

  it('a viewer sees the figures and lists, and no send, create or delete; a page it cannot open says so', async () => {
    const { context, page, ticket } = await signedInAs('viewer');
    expect(await navLinks(page).allTextContents()).toEqual(withoutSendOrUsers);
    // The dashboard's figures, without its send button.
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    await page.getByRole('link', { name: `Campaign ${ticket}` }).waitFor();
    expect(await page.getByRole('link', { name: /Send(?!er)/ }).count()).toBe(0);
    // A scheduled campaign's page, without its cancel button.
    await page.getByRole('link', { name: `Campaign ${ticket}` }).click();
    await page.getByText('Waiting for its due time.').waitFor();
    expect(await page.getByRole('button', { name: 'Cancel campaign' }).count()).toBe(0);

    await open(page, 'Lists', 'Lists');
    await page.getByRole('link', { name: 'Shop customers' }).waitFor();
    expect(await page.getByRole('button', { name: 'Delete Shop customers' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'New list' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Shop customers' }).click();
    await page.getByRole('heading', { name: 'Shop customers', level: 1 }).waitFor();
    await page.getByText('33612345678').waitFor();
    for (const control of [
      'Remove duplicates',
      'Clear NPAI numbers',
      'Edit 33612345678',
      'Remove 33612345678',
    ])
      expect(await page.getByRole('button', { name: control }).count(), control).toBe(0);
    expect(await page.getByRole('heading', { name: 'Add contacts' }).count()).toBe(0);

    await open(page, 'Blacklist', 'Blacklist and NPAI');
    await page.getByText('The Blacklist is empty.').waitFor();
    expect(await page.getByRole('button', { name: 'Add to the Blacklist' }).count()).toBe(0);

    await open(page, 'Tokens', 'API tokens');
    await page.locator('tbody tr').first().waitFor();
    expect(await page.getByRole('button', { name: 'Create token' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Revoke/ }).count()).toBe(0);

    await open(page, 'Webhooks', 'Webhooks');
    await page.getByText('No webhooks yet.').waitFor();
    expect(await page.getByRole('button', { name: 'Add webhook' }).count()).toBe(0);

    // The alert's settings are read, not changed.
    await open(page, 'Balance alert', 'Balance alert');
    expect(await page.getByLabel('Trigger (credits)').isDisabled()).toBe(true);
    await page.getByText('Your role (viewer) can read this alert, not change it.').waitFor();
    expect(await page.getByRole('button', { name: 'Save the alert' }).count()).toBe(0);

    await open(page, 'Sub-accounts', 'Sub-accounts');
    await page.getByText('No sub-accounts yet.').waitFor();
    expect(await page.getByRole('heading', { name: 'New sub-account' }).count()).toBe(0);

    // Pages its role does not open, reached by their address, say so.
    for (const [path, title] of [
      ['/console/send', 'Send'],
      ['/console/users', 'Users and roles'],
    ]) {
      await page.goto(path);
      await page.getByRole('heading', { name: title, level: 1 }).waitFor();
      await page.getByText('Your role (viewer) does not give access to this page').waitFor();
    }
    await f.screenshot(page, 'teams-viewer-refused');
    await context.close();
  });

  it('a sender sends and manages lists, but has no tokens, webhooks, billing or users to change', async () => {
    const { context, page, ticket } = await signedInAs('sender');
    expect(await navLinks(page).allTextContents()).toEqual(everyPage.filter((p) => p !== 'Users'));
    await page.goto(`/console/campaigns/${ticket}`);
    await page.getByRole('button', { name: 'Cancel campaign' }).waitFor();

    await open(page, 'Lists', 'Lists');
    await page.getByRole('button', { name: 'Delete Shop customers' }).waitFor();
    await page.getByRole('heading', { name: 'New list' }).waitFor();
    await page.getByRole('link', { name: 'Shop customers' }).click();
    await page.getByRole('button', { name: 'Remove duplicates' }).waitFor();
    await page.getByRole('link', { name: 'Send to this list' }).click();
    await page.getByRole('heading', { name: 'Send', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).waitFor();

    await open(page, 'Blacklist', 'Blacklist and NPAI');
    await page.getByRole('button', { name: 'Add to the Blacklist' }).waitFor();

    await open(page, 'Tokens', 'API tokens');
    await page.locator('tbody tr').first().waitFor();
    expect(await page.getByRole('button', { name: 'Create token' }).count()).toBe(0);
    await open(page, 'Webhooks', 'Webhooks');
    await page.getByText('No webhooks yet.').waitFor();
    expect(await page.getByRole('button', { name: 'Add webhook' }).count()).toBe(0);
    await open(page, 'Sub-accounts', 'Sub-accounts');
    await page.getByText('No sub-accounts yet.').waitFor();
    expect(await page.getByRole('heading', { name: 'New sub-account' }).count()).toBe(0);
    await page.goto('/console/users');
    await page.getByText('Your role (sender) does not give access to this page').waitFor();
    await context.close();
  });

  it('a developer creates tokens no wider than its role, and webhooks, but sends nothing', async () => {
    const { context, page } = await signedInAs('developer');
    expect(await navLinks(page).allTextContents()).toEqual(withoutSendOrUsers);
    await open(page, 'Tokens', 'API tokens');
    // Only the read scope is within a developer's rights.
    const scope = page.getByLabel('Scope');
    expect(await scope.locator('option').allTextContents()).toEqual(['read: reads only']);
    await page.getByLabel('Name', { exact: true }).fill('Dashboard reader');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.locator('.secret code').textContent())!.trim();
    const row = page.getByRole('row', { name: /Dashboard reader/ });
    await expect.poll(() => row.locator('td[data-label="Scope"]').textContent()).toBe('read');
    expect(await f.call(secret, 'GET', '/lists')).toMatchObject({ status: 1 });
    expect(
      await f.call(secret, 'POST', '/list', { list: { name: 'x', contacts: { gsm: [] } } }),
    ).toMatchObject({
      status: -1,
    });
    await row.getByRole('button', { name: 'Revoke Dashboard reader' }).waitFor();

    await open(page, 'Webhooks', 'Webhooks');
    await page.getByRole('button', { name: 'Add webhook' }).waitFor();
    await open(page, 'Lists', 'Lists');
    await page.getByRole('link', { name: 'Shop customers' }).waitFor();
    expect(await page.getByRole('button', { name: 'Delete Shop customers' }).count()).toBe(0);
    await context.close();
  });

  it('an admin has every page but users, and billing read-only', async () => {
    const { context, page } = await signedInAs('admin');
    expect(await navLinks(page).allTextContents()).toEqual(everyPage.filter((p) => p !== 'Users'));
    await open(page, 'Tokens', 'API tokens');
    await page.getByRole('button', { name: 'Create token' }).waitFor();
    await open(page, 'Webhooks', 'Webhooks');
    await page.getByRole('button', { name: 'Add webhook' }).waitFor();
    await open(page, 'Lists', 'Lists');
    await page.getByRole('button', { name: 'Delete Shop customers' }).waitFor();
    // Billing: sub-accounts' creation and the balance alert's setting are the owner's.
    await open(page, 'Sub-accounts', 'Sub-accounts');
    await page.getByText('No sub-accounts yet.').waitFor();
    expect(await page.getByRole('heading', { name: 'New sub-account' }).count()).toBe(0);
    await open(page, 'Balance alert', 'Balance alert');
    expect(await page.getByLabel('Trigger (credits)').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save the alert' }).count()).toBe(0);
    await page.goto('/console/users');
    await page.getByText('Your role (admin) does not give access to this page').waitFor();
    await context.close();
  });

  it('the owner invites a user by e-mail, who signs in with its role; a role change reaches its open page; the last owner stays', async () => {
    const owner = await accountWithList();
    const ownerContext = await f.context();
    const ownerPage = await ownerContext.newPage();
    await f.signIn(ownerPage, owner.email, owner.password);
    expect(await ownerPage.getByTestId('user').textContent()).toBe(`${owner.email} owner`);
    expect(await navLinks(ownerPage).allTextContents()).toEqual(everyPage);
    await open(ownerPage, 'Users', 'Users and roles');
    const ownerRow = ownerPage.getByRole('row', { name: new RegExp(owner.email) });
    await ownerRow.waitFor();

    // The last owner cannot demote itself: the API's words.
    await ownerPage.getByLabel(`Role of ${owner.email}`).selectOption('admin');
    await expect.poll(() => ownerPage.getByRole('alert').textContent()).toContain("the account's last owner");

    // An invitation, e-mailed with its link.
    const invited = `invited-${Date.now().toString(36)}@example.com`;
    await ownerPage.getByLabel('E-mail').fill(invited);
    await ownerPage.getByLabel('Role', { exact: true }).selectOption('sender');
    await ownerPage.getByRole('button', { name: 'Send the invitation' }).click();
    await ownerPage.getByText(`Invitation e-mailed to ${invited} as sender`).waitFor();
    const invitedRow = ownerPage.getByRole('row', { name: new RegExp(invited) });
    await expect.poll(() => invitedRow.locator('td[data-label="State"]').textContent()).toBe('invited');
    await f.screenshot(ownerPage, 'teams-users');
    const mail = await waitFor(
      () => sink.mails.find((m) => m.rcptTo.includes(invited)),
      `the invitation to ${invited}`,
    );
    const link = /https?:\/\/\S+\/accept\?token=[\w-]+/.exec(mail.text)?.[0];
    expect(link, mail.text).toBeDefined();

    // The invited user opens the link, sets a password and signs in as a sender.
    const userContext = await f.context();
    const userPage = await userContext.newPage();
    await userPage.goto(`/console/accept?token=${new URL(link!).searchParams.get('token')}`);
    await userPage.getByLabel('New password').fill(userPassword);
    await userPage.getByRole('button', { name: 'Set the password' }).click();
    await userPage.getByRole('heading', { name: 'Your password is set' }).waitFor();
    await userPage.getByRole('button', { name: 'Sign in' }).click();
    await userPage.getByLabel('E-mail').fill(invited);
    await userPage.getByLabel('Password').fill(userPassword);
    await userPage.getByRole('button', { name: 'Sign in' }).click();
    await userPage.getByTestId('balance').waitFor();
    expect(await userPage.getByTestId('user').textContent()).toBe(`${invited} sender`);
    await open(userPage, 'Lists', 'Lists');
    const deleteList = userPage.getByRole('button', { name: 'Delete Shop customers' });
    await deleteList.waitFor();

    // The owner sees it active, and makes it a viewer.
    await ownerPage.reload();
    await expect.poll(() => invitedRow.locator('td[data-label="State"]').textContent()).toBe('active');
    await ownerPage.getByLabel(`Role of ${invited}`).selectOption('viewer');
    await ownerPage.getByText(`${invited} is now viewer.`).waitFor();

    // The user's open page still shows the sender's controls; its next request is refused in the API's words,
    // and the page follows the role it has now.
    await deleteList.click();
    await userPage.getByRole('button', { name: 'Yes, delete' }).click();
    await expect
      .poll(() => userPage.getByRole('alert').textContent())
      .toContain('the role viewer may not do this');
    await expect.poll(() => deleteList.count()).toBe(0);
    await expect.poll(() => userPage.getByTestId('user').textContent()).toBe(`${invited} viewer`);
    expect(await navLinks(userPage).allTextContents()).toEqual(withoutSendOrUsers);
    const lists = await f.call(owner.token, 'GET', '/lists');
    expect(lists.lists).toHaveLength(1);

    // Removed, after a confirmation: its session ends at its next request.
    await ownerPage.getByRole('button', { name: `Remove ${invited}` }).click();
    await ownerPage.getByRole('button', { name: 'Yes, remove' }).click();
    await ownerPage.getByText(`${invited} was removed`).waitFor();
    await expect.poll(() => invitedRow.count()).toBe(0);
    await navLink(userPage, 'Campaigns').click();
    await userPage.getByRole('heading', { name: 'Sign in to Pigeon' }).waitFor();
    await userContext.close();
    await ownerContext.close();
  });
});

describe('console for teams without SMTP', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture();
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  it('an invitation without SMTP_URL is refused in the API words, and creates no user', async () => {
    const owner = await f.account();
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, owner.email, owner.password);
    await open(page, 'Users', 'Users and roles');
    await page.getByRole('row', { name: new RegExp(owner.email) }).waitFor();
    await page.getByLabel('E-mail').fill('nobody-mailed@example.com');
    await page.getByRole('button', { name: 'Send the invitation' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('SMTP_URL is not set');
    expect(await page.getByRole('row', { name: /nobody-mailed/ }).count()).toBe(0);
    await context.close();
  });
});
