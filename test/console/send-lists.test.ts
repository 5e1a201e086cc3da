// The console's send form, lists and blacklist, driven in Chromium against a whole Pigeon: the counter prices
// a text as the server does, a simulation charges nothing, sends land on their campaign, numbers come from a
// CSV file too, a CSV of 1,200 contacts imports in chunks, and the blacklist and NPAI filter a send until the
// number is taken off them.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';

interface Result {
  status: number;
  cost: number;
  credits: number;
  total: number;
  sent: number;
  blacklisted: number;
  ticket?: string;
}

describe('console send, lists and blacklist', () => {
  let f: ConsoleFixture;
  beforeAll(async () => {
    f = await startConsoleFixture();
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  const call = <T>(token: string, method: string, path: string, body?: unknown) =>
    f.call<T>(token, method, path, body);

  const simulate = (token: string, message: Record<string, unknown>, numbers: string[]) =>
    call<Result>(token, 'POST', '/send/simulate', {
      sms: { message, recipients: { gsm: numbers.map((value) => ({ value })) } },
    });

  /** The value of the figure (`.stat`) in `scope` whose label is exactly `label`. */
  const statValue = (scope: Locator, label: string) =>
    scope
      .locator('.stat', { has: scope.page().locator('.stat-label').getByText(label, { exact: true }) })
      .locator('.stat-value')
      .textContent();
  /** The counter's line under the text: `… credits for N recipients`. */
  const counterLine = async (page: Page) =>
    (await page.getByTestId('counter').locator('p').first().textContent()) ?? '';

  async function counter(page: Page) {
    const text = async (id: string) => (await page.getByTestId(id).textContent()) ?? '';
    const digits = (s: string) => Number(s.replace(/[^\d]/g, ''));
    return {
      characters: digits(await text('counter-characters')),
      encoding: await text('counter-encoding'),
      parts: digits(await text('counter-parts')),
      cost: digits(await text('counter-cost')),
      approximate: (await text('counter-parts')).startsWith('at least'),
    };
  }

  async function signedIn(options: { credits?: number; phone?: boolean } = {}) {
    const account = await f.account({ credits: options.credits ?? 1000 });
    const context = await f.context({ phone: options.phone });
    const page = await context.newPage();
    await f.signIn(page, account.email, account.password);
    return { account, context, page };
  }

  it('the counter prices the text as simulate does, and a simulation charges nothing', async () => {
    const { account, context, page } = await signedIn();
    await page.goto('/console/send');
    const numbers = ['33612345678', '33612345679', '33612345680'];
    await page.getByLabel('Numbers', { exact: true }).fill(numbers.join('\n'));
    const text = page.getByLabel('Text');

    // Each text, as alert and as marketing: the counter and the server's simulation agree on parts and cost.
    const cases: { text: string; pushtype: 'alert' | 'marketing'; encoding: string; parts: number }[] = [
      { text: 'Hello from Pigeon', pushtype: 'alert', encoding: 'GSM-7', parts: 1 },
      { text: 'a'.repeat(160), pushtype: 'alert', encoding: 'GSM-7', parts: 1 },
      { text: `${'a'.repeat(159)}€`, pushtype: 'alert', encoding: 'GSM-7', parts: 2 },
      { text: 'Ça marche 😀', pushtype: 'alert', encoding: 'UCS-2', parts: 1 },
      { text: 'ą'.repeat(71), pushtype: 'alert', encoding: 'UCS-2', parts: 2 },
      { text: 'a'.repeat(150), pushtype: 'marketing', encoding: 'GSM-7', parts: 2 },
      { text: 'Sale <-stop-> today', pushtype: 'marketing', encoding: 'GSM-7', parts: 1 },
    ];
    for (const c of cases) {
      await page.getByLabel(c.pushtype === 'alert' ? 'Alert' : 'Marketing').check();
      await text.fill(c.text);
      const expected = await simulate(account.token, { text: c.text, pushtype: c.pushtype }, numbers);
      expect(expected).toMatchObject({ status: 1, sent: 3 });
      await expect
        .poll(() => counter(page))
        .toMatchObject({
          encoding: c.encoding,
          parts: c.parts,
          cost: expected.cost,
          approximate: false,
        });
      expect(expected.cost).toBe(c.parts * 3);
    }
    // The marketing mention is counted: appended on a new line, or where the marker stands.
    const mention = 'STOP au 36180';
    await page.getByLabel('Marketing').check();
    await text.fill('Sale');
    await expect.poll(async () => (await counter(page)).characters).toBe(4 + 1 + mention.length);
    await text.fill('Sale <-stop-> today');
    await expect
      .poll(async () => (await counter(page)).characters)
      .toBe('Sale  today'.length + mention.length);

    // One URL field per short-link marker, added and removed as markers are typed.
    await text.fill('Offer <-short-> and <-short->');
    await page.getByLabel('Short link 2 URL').waitFor();
    await text.fill('Offer <-short->');
    await page.getByLabel('Short link URL').waitFor();
    expect(await page.getByLabel('Short link 2 URL').count()).toBe(0);
    await page.getByRole('button', { name: 'Simulate' }).click();
    // Without a URL for the marker, the form says so next to the link field.
    const linkField = page.locator('.field', { has: page.getByLabel('Short link URL') });
    await expect.poll(() => linkField.locator('.field-error').textContent()).toContain('Give the URL');
    // A URL that is not http(s) is refused by the server, next to the same field.
    await page.getByLabel('Short link URL').fill('ftp://example.com/offer');
    await page.getByRole('button', { name: 'Simulate' }).click();
    await expect.poll(() => linkField.locator('.field-error').textContent()).toContain('http or https');
    await page.getByLabel('Short link URL').fill('https://example.com/offer');
    const withLink = await simulate(
      account.token,
      { text: 'Offer <-short->', pushtype: 'marketing', links: ['https://example.com/offer'] },
      numbers,
    );
    // The link is priced at its real length (the session tells it): exact, as simulate.
    expect(await counter(page)).toMatchObject({ cost: withLink.cost, approximate: false });
    const longText = `${'a'.repeat(120)} <-short->`;
    await text.fill(longText);
    const longWithLink = await simulate(
      account.token,
      { text: longText, pushtype: 'marketing', links: ['https://example.com/offer'] },
      numbers,
    );
    await expect.poll(() => counter(page)).toMatchObject({ cost: longWithLink.cost, approximate: false });

    // Simulate in the page: the result shows, the balance does not move.
    await text.fill('Hello from Pigeon');
    await page.getByLabel('Alert').check();
    await page.getByRole('button', { name: 'Simulate' }).click();
    const result = page.getByTestId('send-result');
    await result.waitFor();
    expect(await result.textContent()).toContain('nothing was charged');
    expect(await statValue(result, 'Cost')).toBe('3 credits');
    expect(await statValue(result, 'Credits after')).toBe('997');
    expect(await call(account.token, 'GET', '/credits')).toMatchObject({ credits: 1000 });
    expect(await call(account.token, 'GET', '/campaigns')).toMatchObject({ totalRecords: 0 });
    await f.screenshot(page, 'send');

    // A bad sender is told next to its field.
    await page.getByLabel('Sender').fill('a!');
    await page.getByRole('button', { name: 'Simulate' }).click();
    const senderError = page.locator('.field', { has: page.getByLabel('Sender') }).locator('.field-error');
    await expect.poll(() => senderError.textContent()).toContain('sender');

    // The delay is picked on the account's zone's wall clock and sent as Y-m-d H:i:s.
    const sent: { sms: { message: Record<string, unknown> } }[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/send/simulate') sent.push(request.postDataJSON());
    });
    await page.getByLabel('Sender').fill('Pigeon');
    await page.getByLabel('Send at (Europe/Paris)').fill('2030-01-02T03:04');
    await page.getByLabel('Send as Unicode').check();
    await page.getByRole('button', { name: 'Simulate' }).click();
    await page.getByTestId('send-result').waitFor();
    expect(sent.at(-1)?.sms.message).toEqual({
      text: 'Hello from Pigeon',
      pushtype: 'alert',
      sender: 'Pigeon',
      delay: '2030-01-02 03:04:00',
      unicode: '1',
    });
    expect(await counter(page)).toMatchObject({ encoding: 'UCS-2', parts: 1, cost: 3 });
    await context.close();
  });

  it('sending pasted numbers creates the campaign and lands on its page', async () => {
    const { account, context, page } = await signedIn();
    await page.goto('/console/send');
    await page.getByLabel('Text').fill('Your code is 1234');
    await page.getByLabel('Numbers', { exact: true }).fill('33612345678, 33612345679\n33612345679');
    await expect.poll(async () => (await counter(page)).cost).toBe(3);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/console\/campaigns\/\d+$/);
    const ticket = page.url().split('/').pop()!;
    const campaigns = await call<{ campaigns: { id: string; total: number; cost: number }[] }>(
      account.token,
      'GET',
      '/campaigns',
    );
    expect(campaigns.campaigns).toHaveLength(1);
    expect(campaigns.campaigns[0]).toMatchObject({ id: ticket, cost: 2 });
    expect(await call(account.token, 'GET', '/credits')).toMatchObject({ credits: 998 });
    // The balance in the top bar follows.
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('998 credits');
    await context.close();
  });

  it('numbers read from a CSV file in the send form are counted with the pasted ones, simulated and sent to', async () => {
    const { account, context, page } = await signedIn();
    await page.goto('/console/send');
    await page.getByLabel('Text').fill('Your code is 1234');
    const bodies: { path: string; gsm: { value: string }[] }[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (request.method() === 'POST' && (path === '/send' || path === '/send/simulate')) {
        bodies.push({ path, gsm: request.postDataJSON().sms.recipients.gsm });
      }
    });
    const recipientsOf = async () => /\bfor (\d+) recipients?$/.exec(await counterLine(page))?.[1];

    // A spreadsheet's export: semicolons, a header naming the number's column (not the first), a quoted cell.
    const csv = ['name;phone;city', 'Ann;33612340001;Lyon', 'Bob;"33612340002";Nice', 'Cid;33612340003;Metz'];
    await page.getByLabel('Numbers from a CSV file').setInputFiles({
      name: 'recipients.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`${csv.join('\r\n')}\r\n`),
    });
    await page.getByText('recipients.csv: 3 numbers (column “phone”)', { exact: true }).waitFor();
    await expect.poll(recipientsOf).toBe('3');
    // A pasted number adds to the file's.
    await page.getByLabel('Numbers', { exact: true }).fill('33612340004');
    await expect.poll(recipientsOf).toBe('4');

    await page.getByRole('button', { name: 'Simulate' }).click();
    const result = page.getByTestId('send-result');
    await result.waitFor();
    expect(await statValue(result, 'Recipients given')).toBe('4');
    expect(await statValue(result, 'Sent')).toBe('4');
    expect(await statValue(result, 'Cost')).toBe('4 credits');
    const numbers = ['33612340004', '33612340001', '33612340002', '33612340003'];
    expect(bodies).toEqual([{ path: '/send/simulate', gsm: numbers.map((value) => ({ value })) }]);
    expect(await call(account.token, 'GET', '/credits')).toMatchObject({ credits: 1000 });

    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/console\/campaigns\/\d+$/);
    const ticket = page.url().split('/').pop()!;
    expect(bodies.at(-1)).toEqual({ path: '/send', gsm: numbers.map((value) => ({ value })) });
    const campaign = await call<{ campaign: { total: number; cost: number }[] }>(
      account.token,
      'GET',
      `/campaign/${ticket}`,
    );
    expect(campaign.campaign[0]).toMatchObject({ total: 4, cost: 4 });
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('996 credits');

    // Removing the file takes its numbers out of the count.
    await page.goto('/console/send');
    await page.getByLabel('Numbers from a CSV file').setInputFiles({
      name: 'recipients.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv.join('\n')),
    });
    await expect.poll(recipientsOf).toBe('3');
    await page.getByRole('button', { name: 'Remove the file' }).click();
    await expect.poll(recipientsOf).toBe('0');
    await context.close();
  });

  it('sends to a list chosen by its checkbox, with its contacts’ fields', async () => {
    const { account, context, page } = await signedIn();
    const made = await call<{ id: string }>(account.token, 'POST', '/list', {
      list: {
        name: 'Customers',
        contacts: {
          gsm: [
            { value: '33611111111', info1: 'Ann' },
            { value: '33611111112', info1: 'Bob' },
          ],
        },
      },
    });
    await call(account.token, 'POST', '/list', {
      list: { name: 'Other', contacts: { gsm: [{ value: '33622222222' }] } },
    });
    // A list's Send link opens the form with that list chosen.
    await page.goto('/console/lists');
    await page.getByRole('row', { name: /Other/ }).getByRole('link', { name: 'Send' }).click();
    await page.waitForURL(/\/console\/send\?list=\d+$/);
    expect(await page.getByLabel('Contact lists').isChecked()).toBe(true);
    expect(await page.getByLabel('Other').isChecked()).toBe(true);
    expect(await page.getByLabel('Customers').isChecked()).toBe(false);

    await page.goto('/console/send');
    await page.getByLabel('Text').fill('Hello [info1]');
    await page.getByLabel('Contact lists').check();
    await page.getByLabel('Customers').check();
    await expect.poll(() => counterLine(page)).toMatch(/\bfor 2 recipients$/);
    await page.getByRole('button', { name: 'Simulate' }).click();
    await page.getByTestId('send-result').waitFor();
    expect(await statValue(page.getByTestId('send-result'), 'Cost')).toBe('2 credits');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/console\/campaigns\/\d+$/);
    const ticket = page.url().split('/').pop()!;
    const campaign = await call<{ campaign: { lists: { id: string }[]; total: number; text: string }[] }>(
      account.token,
      'GET',
      `/campaign/${ticket}`,
    );
    expect(campaign.campaign[0]).toMatchObject({ total: 2, lists: [{ id: made.id }] });
    await context.close();
  });

  it('imports a CSV of 1,200 contacts in chunks, then browses, searches, edits, removes and deduplicates', async () => {
    const { account, context, page } = await signedIn();
    await page.goto('/console/lists');
    await page.getByText('No lists yet').waitFor();
    const lines = ['number,info1,info2'];
    for (let i = 0; i < 1200; i++) lines.push(`33612${String(i).padStart(6, '0')},Name ${i},City ${i % 7}`);
    lines.splice(600, 0, 'not a number,Nobody,Nowhere');
    const bodies: { list: { name?: string; listId?: string; contacts: { gsm: unknown[] } } }[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/list') {
        bodies.push(request.postDataJSON());
      }
    });

    await page.getByLabel('List name').fill('Newsletter');
    await page.getByLabel('Contacts from a CSV file').setInputFiles({
      name: 'contacts.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(lines.join('\r\n')),
    });
    await page.getByText('contacts.csv: 1,201 contacts (header: number, info1, info2)').waitFor();
    await page.getByRole('button', { name: 'Create the list with 1,201 contacts' }).click();
    const progress = page.getByRole('progressbar', { name: 'Import progress' });
    await expect.poll(() => progress.getAttribute('aria-valuenow')).toBe('1201');
    await page.getByText('Imported: 1,200 contacts added.').waitFor();
    expect(await page.getByTestId('import-added').textContent()).toBe('1,200');
    expect(await page.getByTestId('import-invalid').textContent()).toBe('1');
    expect(await page.getByTestId('import-duplicates').textContent()).toBe('0');
    // Three requests of at most 500 contacts: the first creates the list, the next add to it.
    expect(bodies.map((b) => b.list.contacts.gsm.length)).toEqual([500, 500, 201]);
    expect(bodies[0].list).toMatchObject({ name: 'Newsletter' });
    expect(bodies[0].list.listId).toBeUndefined();
    const lists = await call<{ lists: { id: string; name: string; count: number }[] }>(
      account.token,
      'GET',
      '/lists',
    );
    expect(lists.lists).toEqual([expect.objectContaining({ name: 'Newsletter', count: 1200 })]);
    const listId = lists.lists[0].id;
    expect(bodies[1].list.listId).toBe(listId);
    expect(bodies[2].list.listId).toBe(listId);
    await page.getByRole('cell', { name: '1,200', exact: true }).waitFor();
    await f.screenshot(page, 'lists');

    // Browse a page at a time.
    await page.getByRole('link', { name: 'Newsletter', exact: true }).click();
    await page.getByRole('heading', { name: 'Newsletter' }).waitFor();
    await page.getByText('1–50 of 1200').waitFor();
    expect(await page.locator('.contacts-table tbody tr').count()).toBe(50);
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('51–100 of 1200').waitFor();
    await page.getByRole('cell', { name: '33612000050', exact: true }).waitFor();
    await f.screenshot(page, 'list');

    // Search, then edit a contact's fields.
    await page.getByLabel('Search').fill('33612000042');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.locator('.contacts-table tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: 'Edit 33612000042' }).click();
    await page.getByLabel('info1').fill('Zoé');
    await page.getByLabel('info3').fill('VIP');
    await page.getByRole('button', { name: 'Save the contact' }).click();
    await page.getByRole('cell', { name: 'Zoé', exact: true }).waitFor();
    const edited = await call<{ list: { info1: string; info2: string; info3: string }[] }>(
      account.token,
      'GET',
      `/list/${listId}?search=33612000042`,
    );
    expect(edited.list).toEqual([expect.objectContaining({ info1: 'Zoé', info2: 'City 0', info3: 'VIP' })]);

    // A number that is not valid is refused next to the number field.
    await page.getByRole('button', { name: 'Edit 33612000042' }).click();
    await page.getByLabel('Number', { exact: true }).fill('12');
    await page.getByRole('button', { name: 'Save the contact' }).click();
    const numberError = page.locator('.field', { has: page.getByLabel('Number', { exact: true }) });
    await expect
      .poll(() => numberError.locator('.field-error').textContent())
      .toContain('not a valid number');
    await page.getByRole('button', { name: 'Cancel' }).click();

    // Remove it.
    await page.getByRole('button', { name: 'Remove 33612000042' }).click();
    await page.getByText('Contact 33612000042 removed.').waitFor();
    await page.getByText('No contact matches.').waitFor();
    await page.getByRole('button', { name: 'Show all' }).click();
    await page.getByText('1,199 contacts').waitFor();

    // A contact changed to another's number makes a duplicate, which deduplicating removes.
    await page.getByLabel('Search').fill('33612000007');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('button', { name: 'Edit 33612000007' }).click();
    await page.getByLabel('Number', { exact: true }).fill('33612000008');
    await page.getByRole('button', { name: 'Save the contact' }).click();
    await page.getByText('Contact 33612000007 saved.').waitFor();
    await page.getByRole('button', { name: 'Remove duplicates' }).click();
    await page.getByText('Deduplicated: 1 duplicate contact removed.').waitFor();
    await page.getByText('1,198 contacts').waitFor();
    const after = await call<{ contacts: number }>(account.token, 'GET', `/list/${listId}`);
    expect(after.contacts).toBe(1198);

    // Clearing NPAI numbers takes the list's numbers on the NPAI list out of it.
    await call(account.token, 'POST', '/npai', { npai: { contacts: { gsm: [{ value: '33612000100' }] } } });
    await page.getByRole('button', { name: 'Clear NPAI numbers' }).click();
    await page.getByText('NPAI numbers cleared: 1 contact removed.').waitFor();
    expect((await call<{ contacts: number }>(account.token, 'GET', `/list/${listId}`)).contacts).toBe(1197);

    // Deleting the list asks first.
    await page.getByRole('link', { name: 'Lists', exact: true }).first().click();
    await page.getByRole('button', { name: 'Delete Newsletter' }).click();
    await page.getByText('Delete “Newsletter” and its 1,197 contacts?').waitFor();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('List “Newsletter” deleted.').waitFor();
    expect(await call(account.token, 'GET', '/lists')).toMatchObject({ lists: [] });
    await context.close();
  }, 120_000);

  it('a blacklisted or NPAI number is counted as such until it is removed from the blacklist page', async () => {
    const { account, context, page } = await signedIn();
    const number = '33698765432';
    await page.goto('/console/blacklist');
    await page.getByText('The Blacklist is empty.').waitFor();
    await page.getByLabel('Numbers to add to the Blacklist').fill(`${number}\nnope`);
    await page.getByRole('button', { name: 'Add to the Blacklist' }).click();
    await page.getByText('1 added to the Blacklist, 1 invalid.').waitFor();
    await page.getByRole('cell', { name: number, exact: true }).waitFor();
    await page.getByLabel('Numbers to add to the NPAI').fill('33698765433');
    await page.getByRole('button', { name: 'Add to the NPAI' }).click();
    await page.getByText('1 added to the NPAI.').waitFor();
    await f.screenshot(page, 'blacklist');

    await page.getByRole('link', { name: 'Send', exact: true }).click();
    await page.getByLabel('Text').fill('Hello');
    await page.getByLabel('Numbers', { exact: true }).fill(`${number}\n33698765433`);
    await page.getByRole('button', { name: 'Simulate' }).click();
    const result = page.getByTestId('send-result');
    await result.waitFor();
    const figure = (label: string) =>
      result.locator('dl div', { has: page.getByText(label, { exact: true }) }).textContent();
    expect(await figure('Blacklisted')).toBe('Blacklisted1');
    expect(await figure('NPAI')).toBe('NPAI1');
    expect(await figure('Invalid')).toBe('Invalid0');
    expect(await simulate(account.token, { text: 'Hello' }, [number])).toMatchObject({
      blacklisted: 1,
      sent: 0,
    });

    await page.getByRole('link', { name: 'Blacklist', exact: true }).click();
    await page.getByRole('button', { name: `Remove ${number} from the Blacklist` }).click();
    await page.getByText(`${number} removed from the Blacklist: it can be sent to again.`).waitFor();
    await page.getByText('The Blacklist is empty.').waitFor();
    // The NPAI number too, from its own section: the Blacklist's stays as it is.
    const npaiNumber = '33698765433';
    const npai = page.getByRole('region', { name: 'NPAI' });
    await npai.getByRole('cell', { name: npaiNumber, exact: true }).waitFor();
    await npai.getByRole('button', { name: `Remove ${npaiNumber} from the NPAI` }).click();
    await npai.getByText(`${npaiNumber} removed from the NPAI: it can be sent to again.`).waitFor();
    await npai.getByText('The NPAI is empty.').waitFor();
    expect(await call(account.token, 'GET', '/npai')).toMatchObject({ status: 1, list: [] });
    expect(await simulate(account.token, { text: 'Hello' }, [npaiNumber])).toMatchObject({
      npai: 0,
      sent: 1,
    });

    await page.getByRole('link', { name: 'Send', exact: true }).click();
    await page.getByLabel('Text').fill('Hello again');
    await page.getByLabel('Numbers', { exact: true }).fill(`${number}\n${npaiNumber}`);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/console\/campaigns\/\d+$/);
    const ticket = page.url().split('/').pop()!;
    await expect
      .poll(
        async () =>
          (
            await call<{ campaign: { total: number; delivered: number }[] }>(
              account.token,
              'GET',
              `/campaign/${ticket}`,
            )
          ).campaign[0],
      )
      .toMatchObject({ total: 2, delivered: 2 });
    await context.close();
  });

  it('works on a phone-sized screen', async () => {
    const { context, page } = await signedIn({ phone: true });
    await page.goto('/console/send');
    await page.getByLabel('Text').fill('Flash sale today only, 20% off everything with the code PIGEON');
    await page.getByLabel('Numbers', { exact: true }).fill('33612345678\n33612345679');
    await page.getByRole('button', { name: 'Simulate' }).click();
    await page.getByTestId('send-result').waitFor();
    // Nothing is wider than the screen.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await f.screenshot(page, 'send-phone');
    await context.close();
  });
});
