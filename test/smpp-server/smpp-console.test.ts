// The console's SMPP users page, end to end in Chromium against a whole Pigeon with its SMPP server on: a user
// created on the page binds and sends at once, and once deleted on the page its binds are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';
import { freePort } from '../helpers/free-port.ts';
import { bindEsme } from './smpp-client.ts';

describe('console SMPP users page', () => {
  let f: ConsoleFixture;
  let smppPort: number;
  beforeAll(async () => {
    smppPort = await freePort();
    f = await startConsoleFixture({ SMPP_SERVER_PORT: String(smppPort) });
  }, 600_000);
  afterAll(async () => {
    await f?.close();
  });

  it('creates an SMPP user that binds and sends, and deletes it', async () => {
    const { email, password } = await f.account({ credits: 50 });
    const context = await f.context();
    const page = await context.newPage();
    await f.signIn(page, email, password);
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'SMPP', exact: true })
      .click();
    await page.getByRole('heading', { name: 'SMPP users', level: 1 }).waitFor();

    // A password longer than SMPP's 8 characters is refused, next to its field.
    await page.getByLabel('System id', { exact: true }).fill('console1');
    await page.getByLabel('Password', { exact: true }).evaluate((input: HTMLInputElement) => {
      input.removeAttribute('maxlength');
    });
    await page.getByLabel('Password', { exact: true }).fill('123456789');
    await page.getByRole('button', { name: 'Create SMPP user' }).click();
    await expect.poll(() => page.getByText(/8 printable ASCII characters/).count()).toBeGreaterThan(0);

    await page.getByLabel('Password', { exact: true }).fill('s3cret');
    await page.getByLabel('Allowed IP addresses (optional)').fill('127.0.0.1');
    await page.getByRole('button', { name: 'Create SMPP user' }).click();
    await page.getByRole('cell', { name: 'console1', exact: true }).waitFor();
    await f.screenshot(page, 'smpp-users');

    const { esme, resp } = await bindEsme(smppPort, 'transceiver', 'console1', 's3cret');
    expect(resp.command_status).toBe(0);
    const sent = await esme.request('submit_sm', {
      source_addr: 'Console',
      destination_addr: '33612345678',
      short_message: Buffer.from('from the console user'),
    });
    expect(sent.command_status).toBe(0);
    await esme.close();

    await page.getByRole('button', { name: 'Delete console1' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('No SMPP users: create one below.').waitFor();
    const { esme: refused, resp: refusal } = await bindEsme(smppPort, 'transceiver', 'console1', 's3cret');
    expect(refusal.command_status).toBe(0x0f);
    await refused.close();
    await context.close();
  }, 120_000);
});
