// A user's recovery and two-factor in Chromium against a whole Pigeon: an invitation's link sets the password,
// the first sign-in, the Profile page turns two-factor on (the secret as text, its otpauth link, a first code,
// recovery codes shown once), sign out, then the sign-in asks for a code after the password, and new recovery
// codes replace the old. Codes are computed here with the server's own totp(); the forgot-password path answers
// on the sign-in page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, totp, totpStepSeconds } from '../../src/users/totp.ts';
import { type ConsoleFixture, startConsoleFixture } from '../helpers/browser.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';
import { waitFor } from '../helpers/wait.ts';

describe('console two-factor sign-in', () => {
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

  it('invitation → password → first sign-in → two-factor on → sign out → sign in with a code', async () => {
    const owner = await f.account({ credits: 42 });
    const email = `sender-${Date.now()}@example.com`;
    const added = await f.deps.services.users.operatorAdd(owner.id, email, 'sender');
    const context = await f.context();
    const page = await context.newPage();
    await page.goto(new URL(added.link).pathname + new URL(added.link).search);
    const password = 'the sender chose this password';
    await page.getByLabel('New password').fill(password);
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await f.signIn(page, email, password);

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Profile' }).click();
    await page.getByRole('heading', { name: 'Profile' }).waitFor();
    expect(await page.getByTestId('two-factor-state').textContent()).toContain('Off');
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secretText = (await page.locator('.account-secret-value').first().textContent())!.trim();
    const otpauth = await page.getByRole('link', { name: 'otpauth link' }).getAttribute('href');
    expect(otpauth).toContain(`secret=${secretText}`);
    const secret = base32Decode(secretText)!;
    await page.getByLabel('Code from the app').fill(totp(secret, Date.now()));
    await page.getByRole('button', { name: 'Turn two-factor on' }).click();
    await expect.poll(() => page.getByTestId('two-factor-state').textContent()).toContain('On');
    const recovery = (await page.locator('.account-secret-value').first().textContent())!.trim().split('\n');
    expect(recovery).toHaveLength(10);
    await f.screenshot(page, 'profile-two-factor-on');

    await page.getByRole('button', { name: 'Sign out', exact: true }).first().click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    // A wrong code is refused; the code of the next time step (within the one-step window, after the one
    // that turned two-factor on) signs in.
    await page.getByLabel('Code').fill('000000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('wrong');
    await page.getByLabel('Code').fill(totp(secret, Date.now() + totpStepSeconds * 1000));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('balance').waitFor();
    expect(await page.getByTestId('balance').textContent()).toBe('42 credits');

    // The sessions list shows this one.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Profile' }).click();
    await page.getByText('This session').waitFor();

    // New recovery codes, with the password and one of the old codes: shown once, the old ones gone.
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('Code', { exact: true }).fill(recovery[0]!);
    await page.getByRole('button', { name: 'New recovery codes' }).click();
    await expect
      .poll(async () => (await page.locator('.account-secret-value').first().textContent())?.trim())
      .not.toBe(recovery.join('\n'));
    const renewed = (await page.locator('.account-secret-value').first().textContent())!.trim().split('\n');
    expect(renewed).toHaveLength(10);
    expect(renewed.filter((c) => recovery.includes(c))).toEqual([]);
    expect(await page.getByTestId('two-factor-state').textContent()).toContain('10 recovery codes left');
    await context.close();
  });

  it("the forgot-password path: the same answer for a stranger, and a user's link sets a new password", async () => {
    const owner = await f.account();
    const context = await f.context();
    const page = await context.newPage();
    await page.goto('/console');
    await page.getByRole('button', { name: 'Forgot your password?' }).click();
    await page.getByLabel('E-mail').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Send me a link' }).click();
    const answered = await page.getByRole('status').textContent();
    expect(answered).toContain('a link to set a new password was sent');
    await page.getByLabel('E-mail').fill(owner.email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe(answered);

    const mail = await waitFor(
      () => sink.mails.find((m) => m.rcptTo.includes(owner.email)),
      `the reset e-mail to ${owner.email}`,
    );
    const link = new URL(/https?:\/\/\S+\/console\/accept\?token=\S+/.exec(mail.text)![0]);
    await page.goto(link.pathname + link.search);
    const password = 'a new password after forgetting';
    await page.getByLabel('New password').fill(password);
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await f.signIn(page, owner.email, password);
    await context.close();
  });
});
