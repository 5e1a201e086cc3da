// The console's moderation, end to end in Chromium: a customer asks for a sender ID on its Sender IDs page and
// sees no operator area; an operator account sees the Operator page, approves the sender ID, refuses a
// campaign a content rule held (its credits come back) and adds a content rule, a bad one told next to its
// field; and sets an account's limits.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, type Envelope, startConsoleFixture } from '../helpers/browser.ts';

describe('console moderation', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture({ SENDER_APPROVAL: 'required' });
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  const nav = (page: Page) => page.getByRole('navigation', { name: 'Console' });

  /** Signs in, once the page has asked whether the account is an operator's (its menu depends on it). */
  async function signIn(page: Page, email: string, password: string) {
    const asked = page.waitForResponse((r) => r.url().endsWith('/operator/me'));
    await f.signIn(page, email, password);
    await asked;
  }

  it('a customer asks for a sender ID; the operator approves it, refuses a held campaign and adds a rule', async () => {
    const customer = await f.account({ credits: 100 });
    const operator = await f.account({ credits: 0 });
    await f.deps.services.moderation.grantOperator('cli', operator.id);
    await f.deps.services.moderation.addRule('cli', {
      kind: 'word',
      value: 'soldes',
      action: 'hold',
      account_id: String(customer.id),
    });
    const held = await f.call<Envelope & { ticket: string }>(customer.token, 'POST', '/send', {
      sms: { message: { text: 'Grandes soldes demain' }, recipients: { gsm: [{ value: '33612345655' }] } },
    });
    expect(held).toMatchObject({ status: 1, moderation: 'pending', credits: 99 });

    const customerPage = await (await f.context()).newPage();
    await signIn(customerPage, customer.email, customer.password);
    expect(await nav(customerPage).getByRole('link', { name: 'Operator' }).count()).toBe(0);
    await nav(customerPage).getByRole('link', { name: 'Sender IDs', exact: true }).click();
    await customerPage.getByRole('heading', { name: 'Sender IDs', level: 1 }).waitFor();
    await customerPage.getByText('No sender ID asked for yet').waitFor();
    await customerPage.getByLabel('Sender ID', { exact: true }).fill('a b');
    await customerPage.getByRole('button', { name: 'Ask for it' }).click();
    await customerPage.getByText('sender.sender "a b" must be 3 to 11 letters').waitFor();
    await customerPage.getByLabel('Sender ID', { exact: true }).fill('Fleur');
    await customerPage.getByLabel('What it is for (optional)').fill('our flower shop');
    await customerPage.getByRole('button', { name: 'Ask for it' }).click();
    await customerPage.getByText('Sender ID “Fleur” asked for').waitFor();
    const row = customerPage.getByRole('row', { name: /Fleur/ });
    await row.getByText('awaiting the operator').waitFor();

    const operatorPage = await (await f.context()).newPage();
    await signIn(operatorPage, operator.email, operator.password);
    await nav(operatorPage).getByRole('link', { name: 'Operator', exact: true }).click();
    await operatorPage.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();

    // The sender ID request: approved.
    const request = operatorPage.getByRole('row', { name: /Fleur/ });
    await request.getByText('our flower shop').waitFor();
    await request.getByRole('button', { name: 'Approve sender Fleur' }).click();
    await operatorPage.getByText(`Sender ID “Fleur” of account ${customer.id} approved.`).waitFor();

    // The held campaign: refused with a reason, its credit refunded.
    const campaign = operatorPage.getByRole('row', { name: /Grandes soldes demain/ });
    await campaign.getByText('word "soldes"').waitFor();
    await campaign.getByRole('button', { name: `Refuse campaign ${held.ticket}` }).click();
    await campaign.getByLabel(`Reason for refusing campaign ${held.ticket}`).fill('misleading');
    await campaign.getByRole('button', { name: `Refuse campaign ${held.ticket}` }).click();
    await operatorPage.getByText(`Campaign ${held.ticket} refused: 1 credits refunded.`).waitFor();
    await operatorPage.getByText('No campaign is waiting for moderation.').waitFor();
    expect((await f.call(customer.token, 'GET', '/credits')).credits).toBe(100);

    // A content rule: a catastrophic pattern is refused next to its field, a domain is added.
    await operatorPage.getByLabel('Kind').selectOption('pattern');
    await operatorPage.getByLabel('Value', { exact: true }).fill('(a+)+');
    await operatorPage.getByRole('button', { name: 'Add rule' }).click();
    await operatorPage.getByRole('alert').getByText('is refused: it has a repeated group').waitFor();
    await operatorPage.getByLabel('Kind').selectOption('domain');
    await operatorPage.getByLabel('Value', { exact: true }).fill('phish.example');
    await operatorPage.getByLabel('Action').selectOption('refuse');
    await operatorPage.getByRole('button', { name: 'Add rule' }).click();
    await operatorPage
      .getByRole('row', { name: /phish\.example/ })
      .getByText('every account')
      .waitFor();
    await f.screenshot(operatorPage, 'operator');

    // The customer sees its sender ID approved, and sends from it.
    await customerPage.reload();
    await customerPage.getByRole('row', { name: /Fleur/ }).getByText('approved').waitFor();
    const fromFleur = await f.call(customer.token, 'POST', '/send', {
      sms: {
        message: { text: 'Bonjour', sender: 'Fleur' },
        recipients: { gsm: [{ value: '33612345656' }] },
      },
    });
    expect(fromFleur.status).toBe(1);
    // The customer's campaigns say it was refused; a simulation of a held text says it would be held.
    await nav(customerPage).getByRole('link', { name: 'Campaigns', exact: true }).click();
    await customerPage
      .getByRole('row', { name: /Grandes soldes demain/ })
      .getByText('refused by moderation')
      .waitFor();
    await customerPage.goto('/console/send');
    await customerPage.getByLabel('Numbers', { exact: true }).fill('33612345657');
    await customerPage.getByLabel('Text').fill('Les soldes de juillet');
    await customerPage.getByRole('button', { name: 'Simulate' }).click();
    await customerPage.getByTestId('send-result').getByText('Held for moderation by the operator').waitFor();

    const refused = await f.call<{ campaign: { status: string }[] }>(
      customer.token,
      'GET',
      `/campaign/${held.ticket}`,
    );
    expect(refused.campaign[0].status).toBe('Refused');
  });

  it("the operator reads and sets an account's limits; a bad value is told next to its field", async () => {
    const customer = await f.account({ credits: 100 });
    const operator = await f.account({ credits: 0 });
    await f.deps.services.moderation.grantOperator('cli', operator.id);
    const page = await (await f.context()).newPage();
    await signIn(page, operator.email, operator.password);
    await nav(page).getByRole('link', { name: 'Operator', exact: true }).click();
    await page.getByRole('heading', { name: 'Limits of an account' }).waitFor();
    await page.getByLabel('Account', { exact: true }).fill(String(customer.id));
    await page.getByRole('button', { name: 'Show its limits' }).click();
    const table = page.getByRole('table', { name: `Limits of account ${customer.id}` });
    const row = (name: string) => table.getByRole('row', { name: new RegExp(`^${name}`) });
    await row('Messages per day').getByText("the instance's").waitFor();

    await page.getByLabel('Parts per second', { exact: true }).fill('fast');
    await page.getByRole('button', { name: 'Save the limits' }).click();
    await page.getByText('parts_per_second "fast" must be a whole number').waitFor();
    expect(await page.getByLabel('Parts per second', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );

    await page.getByLabel('Parts per second', { exact: true }).fill('');
    await page.getByLabel('Messages per day', { exact: true }).fill('500');
    await page.getByLabel('Countries', { exact: true }).fill('fr, be');
    await page.getByRole('button', { name: 'Save the limits' }).click();
    await page.getByText(`Limits of account ${customer.id} saved.`).waitFor();
    await row('Messages per day').getByText('its own').waitFor();
    expect(await row('Messages per day').getByRole('cell').nth(1).textContent()).toBe('500');
    expect(await row('Countries').getByRole('cell').nth(1).textContent()).toBe('BE,FR');
    // The customer is held to them at once (this process's memory was cleared by the change).
    const limits = await f.call<{ limits: { daily_messages: { value: number; from: string } } }>(
      customer.token,
      'GET',
      '/account/limits',
    );
    expect(limits.limits.daily_messages).toEqual({ value: 500, from: 'account' });
    await f.screenshot(page, 'operator-limits');

    await page.getByRole('button', { name: 'Inherit every limit' }).click();
    await page.getByText(`Account ${customer.id} inherits every limit again.`).waitFor();
    await row('Messages per day').getByText("the instance's").waitFor();
    expect(await page.getByLabel('Messages per day', { exact: true }).inputValue()).toBe('');
  });
});
