// The operator's user commands, each a `pigeon …` process on the server's database: add prints the invitation's
// link (and e-mails it when SMTP_URL is set), list prints the account's users, reset-password a new link, and
// remove takes the user's rights at once but never the account's last owner.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pigeonOn, pigeonWith } from '../helpers/cli.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';
import { linkToken, signedInUser, userPassword } from './users-fixture.ts';

/** Each command is a process of its own: several seconds each on a loaded two-core machine. */
const manyCallsMs = 120_000;

describeEachDialect('operator user commands', (h) => {
  const sink = new SmtpSink();
  beforeAll(async () => {
    await sink.listen();
  });
  afterAll(async () => {
    await sink.close();
  });
  const lines = (stdout: string) =>
    stdout === ''
      ? []
      : stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));

  it(
    'user add prints the link and e-mails it with SMTP_URL; list, reset-password and remove',
    async () => {
      const account = await h().account();
      const email = `cli-${Date.now()}@example.com`;
      const added = await pigeonWith(
        {
          DATABASE_URL: h().databaseUrl,
          SMTP_URL: sink.url(),
          CONSOLE_URL: 'https://pigeon.example/console',
        },
        'user',
        'add',
        String(account.id),
        email,
        '--role',
        'developer',
      );
      expect(added.code, added.stderr).toBe(0);
      const [user] = lines(added.stdout);
      expect(user).toMatchObject({
        account_id: String(account.id),
        email,
        role: 'developer',
        state: 'invited',
        link: expect.stringMatching(/^https:\/\/pigeon\.example\/console\/accept\?token=/),
        emailed: true,
      });
      expect(sink.mails.find((m) => m.rcptTo.includes(email))?.text).toContain(user.link);
      const accepted = await call(h().app, 'POST', '/users/accept', {
        json: { user: { token: linkToken(user.link), password: userPassword } },
      });
      expect(accepted.body).toMatchObject({ status: 1, user: { email, state: 'active' } });

      const listed = await pigeonOn(h().databaseUrl, 'user', 'list', '--account', String(account.id));
      expect(listed.code, listed.stderr).toBe(0);
      expect(lines(listed.stdout).map((u) => [u.role, u.state])).toEqual([
        ['owner', 'active'],
        ['developer', 'active'],
      ]);

      const reset = await pigeonOn(h().databaseUrl, 'user', 'reset-password', user.id);
      expect(reset.code, reset.stderr).toBe(0);
      const [link] = lines(reset.stdout);
      expect(link).toMatchObject({ id: user.id, email, link: expect.stringContaining('token=') });
      const newPassword = 'a brand new password here';
      const set = await call(h().app, 'POST', '/users/accept', {
        json: { user: { token: linkToken(link.link), password: newPassword } },
      });
      expect(set.body.status).toBe(1);

      const removed = await pigeonOn(h().databaseUrl, 'user', 'remove', user.id);
      expect(removed.code, removed.stderr).toBe(0);
      expect(lines(removed.stdout)).toEqual([{ id: user.id, account_id: String(account.id), removed: true }]);
      const signIn = await call(h().app, 'POST', '/console/session', {
        json: { email, password: newPassword },
      });
      expect(signIn.body.status).toBe(-1);
    },
    manyCallsMs,
  );

  it(
    "without SMTP_URL user add only prints the link; remove keeps an account's last owner; bad input exits 1 or 2",
    async () => {
      const account = await h().account();
      const email = `quiet-${Date.now()}@example.com`;
      const added = await pigeonOn(
        h().databaseUrl,
        'user',
        'add',
        String(account.id),
        email,
        '--role',
        'viewer',
      );
      expect(added.code, added.stderr).toBe(0);
      expect(lines(added.stdout)[0]).toMatchObject({
        email,
        emailed: false,
        link: expect.stringContaining('token='),
      });

      const [owner] = (await h().deps.services.users.operatorList(account.id)).filter(
        (u) => u.role === 'owner',
      );
      const last = await pigeonOn(h().databaseUrl, 'user', 'remove', owner.id);
      expect(last.code).toBe(1);
      expect(last.stderr).toMatch(/last owner/);

      // An open session of a user the operator removes answers -1 at its next request.
      const viewer = await signedInUser(h(), account.id, 'viewer');
      expect((await viewer.call('GET', '/credits')).body.status).toBe(1);
      expect((await pigeonOn(h().databaseUrl, 'user', 'remove', String(viewer.id))).code).toBe(0);
      expect((await viewer.call('GET', '/credits')).body.status).toBe(-1);

      const noRole = await pigeonOn(h().databaseUrl, 'user', 'add', String(account.id), 'x@example.com');
      expect(noRole.code).toBe(2);
      expect(noRole.stderr).toMatch(/--role/);
      const badRole = await pigeonOn(
        h().databaseUrl,
        'user',
        'add',
        String(account.id),
        'y@example.com',
        '--role',
        'boss',
      );
      expect(badRole.code).toBe(1);
      expect(badRole.stderr).toMatch(/owner, admin, sender, developer, viewer/);
      const unknown = await pigeonOn(h().databaseUrl, 'user', 'list', '--account', '999999');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/account 999999 does not exist/);
      const help = await pigeonOn(h().databaseUrl, '--help');
      expect(help.stdout).toContain('user reset-password USER_ID');
    },
    manyCallsMs,
  );
});
