// The users of an account through the API, on both dialects, with a real SMTP sink: an owner's invitation is
// e-mailed, its link sets a password once and until it expires; a removed or demoted user's open session loses
// its rights at the next request; an account always keeps an owner; a token is never wider than its creator.
import { describe, expect, it } from 'vitest';
import { availableDialects, call, createHarness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  consoleSignIn,
  linkToken,
  sessionCall,
  signedInUser,
  smtpHarness,
  userPassword,
} from './users-fixture.ts';

const accountPassword = 'correct horse battery';

for (const dialect of availableDialects()) {
  describe(`users of an account [${dialect}]`, () => {
    const { sink, h } = smtpHarness(dialect);

    /** An account whose owner is signed in to the console with the account's own e-mail and password. */
    async function ownerSession() {
      const account = await h().account();
      const email = (await h().deps.services.accounts.operatorShow(account.id)).email;
      const { answer, cookie, csrf } = await consoleSignIn(h(), email, accountPassword);
      expect(answer.body.session).toMatchObject({ email, role: 'owner', signed_in_account_id: account.id });
      return { account, email, as: sessionCall(h(), cookie!, csrf!) };
    }
    const mailTo = (to: string) =>
      waitFor(() => sink.mails.find((m) => m.rcptTo.includes(to)), `the e-mail to ${to}`);

    it("an account's e-mail and password sign its owner in; GET /users lists the owner", async () => {
      const { account, email, as } = await ownerSession();
      const listed = await as('GET', '/users');
      expect(listed.body).toMatchObject({
        status: 1,
        users: [{ id: expect.stringMatching(/^\d+$/), email, role: 'owner', state: 'active' }],
      });
      // The legacy body credentials are the account's, unchanged.
      const legacy = await call(h().app, 'POST', '/send/simulate', {
        json: {
          sms: {
            authentication: { username: email, password: accountPassword },
            message: { text: 'hi' },
            recipients: { gsm: [{ value: '33612345678' }] },
          },
        },
      });
      expect(legacy.body.status).toBe(1);
      expect(account.id).toBeGreaterThan(0);
    });

    it('an invitation is e-mailed; its link sets the password once, then signs the user in', async () => {
      const owner = await ownerSession();
      const { as } = owner;
      const email = `Invited.${Date.now()}@Example.com`;
      const invited = await as('POST', '/users', { json: { user: { email, role: 'sender' } } });
      expect(invited.body).toMatchObject({
        status: 1,
        user: { email: email.toLowerCase(), role: 'sender', state: 'invited' },
      });
      const mail = await mailTo(email.toLowerCase());
      expect(mail.mailFrom).toBe('pigeon@example.com');
      const link = /https:\/\/sms\.example\.com\/console\/accept\?token=\S+/.exec(mail.text)?.[0];
      expect(link, mail.text).toBeDefined();
      const token = linkToken(link!);
      // Only the token's SHA-256 is stored.
      const stored = await h()
        .deps.store.db.selectFrom('users')
        .select('link_hash')
        .where('email', '=', email.toLowerCase())
        .executeTakeFirstOrThrow();
      expect(stored.link_hash).not.toContain(token);
      expect(stored.link_hash).toMatch(/^[0-9a-f]{64}$/);

      // Invited, not yet signed in: no password works.
      expect((await consoleSignIn(h(), email, userPassword)).answer.body.status).toBe(-1);
      // Weak passwords are refused and leave the link open.
      for (const [password, why] of [
        ['short', /at least 10 characters/],
        ['1234567890', /most common passwords/],
        ['Password123', /most common passwords/],
      ] as const) {
        const weak = await call(h().app, 'POST', '/users/accept', { json: { user: { token, password } } });
        expect(weak.body).toMatchObject({ status: -7, details: expect.stringMatching(why) });
      }
      const accepted = await call(h().app, 'POST', '/users/accept', {
        json: { user: { token, password: userPassword } },
      });
      expect(accepted.body).toMatchObject({ status: 1, user: { role: 'sender', state: 'active' } });
      const again = await call(h().app, 'POST', '/users/accept', {
        json: { user: { token, password: 'another password of mine' } },
      });
      expect(again.body).toMatchObject({ status: -1, message: 'Authentication error' });
      expect((await consoleSignIn(h(), email, 'another password of mine')).answer.body.status).toBe(-1);
      const signedIn = await consoleSignIn(h(), email, userPassword);
      expect(signedIn.answer.body.session).toMatchObject({ email: email.toLowerCase(), role: 'sender' });
      // A guessed token is refused the same way.
      const guessed = await call(h().app, 'POST', '/users/accept', {
        json: { user: { token: 'x'.repeat(43), password: userPassword } },
      });
      expect(guessed.body.status).toBe(-1);
      // The audit log has the invitation (by the owner) and the password set (by the invited user), once each.
      const userId = Number(invited.body.user.id);
      const entries = await h()
        .deps.store.db.selectFrom('audit_log')
        .select(['action', 'actor_kind', 'actor_id', 'actor_label'])
        .where('object_type', '=', 'user')
        .where('object_id', '=', String(userId))
        .orderBy('id')
        .execute();
      expect(entries).toEqual([
        expect.objectContaining({ action: 'user.invite', actor_kind: 'user', actor_label: owner.email }),
        {
          action: 'user.set_password',
          actor_kind: 'user',
          actor_id: String(userId),
          actor_label: email.toLowerCase(),
        },
      ]);
    });

    it('an expired link is refused; the operator opens a new one', async () => {
      const { account } = await ownerSession();
      const email = `late-${Date.now()}@example.com`;
      const added = await h().deps.services.users.operatorAdd(account.id, email, 'viewer');
      h().clock.advance(72 * 3_600_000);
      const late = await call(h().app, 'POST', '/users/accept', {
        json: { user: { token: linkToken(added.link), password: userPassword } },
      });
      expect(late.body).toMatchObject({ status: -1, details: expect.stringMatching(/expired/) });
      const reset = await h().deps.services.users.operatorResetPassword(Number(added.id));
      const ok = await call(h().app, 'POST', '/users/accept', {
        json: { user: { token: linkToken(reset.link), password: userPassword } },
      });
      expect(ok.body).toMatchObject({ status: 1, user: { email, role: 'viewer' } });
    });

    it("a removed user's open sessions end at once", async () => {
      const { account, as } = await ownerSession();
      const user = await signedInUser(h(), account.id, 'admin');
      expect((await user.call('GET', '/credits')).body.status).toBe(1);
      const removed = await as('DELETE', `/users/${user.id}`);
      expect(removed.body).toMatchObject({ status: 1, deleted_user: String(user.id) });
      expect((await user.call('GET', '/credits')).body).toMatchObject({
        status: -1,
        details: expect.stringMatching(/no console session/),
      });
      const left = await h()
        .deps.store.db.selectFrom('console_sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .execute();
      expect(left, 'the removal deleted its sessions').toEqual([]);
      expect((await user.call('GET', '/console/session')).body.status).toBe(-1);
      expect((await consoleSignIn(h(), user.email)).answer.body.status).toBe(-1);
    });

    it("a demoted user's open session loses the rights of its old role at the next request", async () => {
      const { account, as } = await ownerSession();
      const user = await signedInUser(h(), account.id, 'admin');
      const hook = { webhook: { type: 'DLR', url: 'https://example.com/dlr' } };
      expect((await user.call('POST', '/webhook', { json: hook })).body.status).toBe(1);
      const demoted = await as('PUT', `/users/${user.id}`, { json: { user: { role: 'viewer' } } });
      expect(demoted.body).toMatchObject({ status: 1, user: { id: String(user.id), role: 'viewer' } });
      expect((await user.call('POST', '/webhook', { json: hook })).body).toMatchObject({
        status: -1,
        details: expect.stringMatching(/role viewer may not/),
      });
      expect((await user.call('GET', '/console/session')).body.session.role).toBe('viewer');
      expect((await user.call('GET', '/webhook')).body.webhooks).toHaveLength(1);
    });

    it('the last owner can be neither removed nor demoted; with a second owner, it can', async () => {
      const { account, as } = await ownerSession();
      const [owner] = (await as('GET', '/users')).body.users;
      for (const [method, json] of [
        ['PUT', { user: { role: 'admin' } }],
        ['DELETE', undefined],
      ] as const) {
        const refused = await as(method, `/users/${owner.id}`, { json });
        expect(refused.body).toMatchObject({ status: -7, details: expect.stringMatching(/last owner/) });
      }
      await expect(h().deps.services.users.operatorRemove(Number(owner.id))).rejects.toMatchObject({
        status: -7,
      });
      const second = await signedInUser(h(), account.id, 'owner');
      expect((await as('PUT', `/users/${owner.id}`, { json: { user: { role: 'admin' } } })).body.status).toBe(
        1,
      );
      // Now the second owner is the last one.
      const last = await second.call('DELETE', `/users/${second.id}`);
      expect(last.body).toMatchObject({ status: -7 });
      expect((await second.call('GET', '/users')).body.users.map((u: { role: string }) => u.role)).toEqual([
        'admin',
        'owner',
      ]);
    });

    it('two owners demoting each other at once leave one owner; two uses of one link at once, one password', async () => {
      const { account } = await ownerSession();
      const first = await signedInUser(h(), account.id, 'owner');
      const second = await signedInUser(h(), account.id, 'owner');
      const [owner] = (await first.call('GET', '/users')).body.users;
      // Three owners: first and second demote the original and each other at once; one must stay owner.
      const answers = await Promise.all([
        first.call('PUT', `/users/${second.id}`, { json: { user: { role: 'admin' } } }),
        second.call('PUT', `/users/${first.id}`, { json: { user: { role: 'admin' } } }),
        first.call('PUT', `/users/${owner.id}`, { json: { user: { role: 'admin' } } }),
      ]);
      const users = await h().deps.services.users.operatorList(account.id);
      expect(users.filter((u) => u.role === 'owner')).toHaveLength(1);
      expect(answers.filter((a) => a.body.status === 1).length).toBeGreaterThanOrEqual(1);
      for (const refused of answers.filter((a) => a.body.status !== 1)) {
        expect(refused.body.status, JSON.stringify(refused.body)).toBeLessThan(0);
      }

      const added = await h().deps.services.users.operatorAdd(
        account.id,
        `race-${Date.now()}@example.com`,
        'viewer',
      );
      const token = linkToken(added.link);
      const passwords = ['the first racing password', 'the second racing password'];
      const uses = await Promise.all(
        passwords.map((password) =>
          call(h().app, 'POST', '/users/accept', { json: { user: { token, password } } }),
        ),
      );
      expect(uses.map((u) => u.body.status).sort()).toEqual([-1, 1]);
      const winner = passwords[uses.findIndex((u) => u.body.status === 1)];
      expect((await consoleSignIn(h(), added.email, winner)).answer.body.status).toBe(1);
    });

    it("users are the account's own: another account's user is -5, and an e-mail is one user's", async () => {
      const a = await ownerSession();
      const b = await ownerSession();
      const [bOwner] = (await b.as('GET', '/users')).body.users;
      expect(
        (await a.as('PUT', `/users/${bOwner.id}`, { json: { user: { role: 'viewer' } } })).body.status,
      ).toBe(-5);
      expect((await a.as('DELETE', `/users/${bOwner.id}`)).body.status).toBe(-5);
      expect(
        (await a.as('POST', '/users', { json: { user: { email: b.email, role: 'viewer' } } })).body,
      ).toMatchObject({
        status: -7,
        details: expect.stringMatching(/already/),
      });
      expect(
        (await a.as('POST', '/users', { json: { user: { email: 'x@example.com', role: 'boss' } } })).body,
      ).toMatchObject({
        status: -7,
        details: expect.stringMatching(/owner, admin, sender, developer, viewer/),
      });
      // An account cannot be created with a user's e-mail either.
      const invitedEmail = `taken-${Date.now()}@example.com`;
      await h().deps.services.users.operatorAdd(a.account.id, invitedEmail, 'viewer');
      const sub = await call(h().app, 'POST', '/account', {
        token: a.account.token,
        json: { account: { email: invitedEmail, password: 'long enough pw', isChild: 1 } },
      });
      expect(sub.body).toMatchObject({ status: -7 });
    });

    it('a token is never wider than its creator: a developer creates read tokens only', async () => {
      const { account } = await ownerSession();
      const developer = await signedInUser(h(), account.id, 'developer');
      for (const scope of ['full', 'send']) {
        const wide = await developer.call('POST', '/token', { json: { token: { name: 'wide', scope } } });
        expect(wide.body).toMatchObject({ status: -1, details: expect.stringMatching(`scope ${scope}`) });
      }
      const narrow = await developer.call('POST', '/token', {
        json: { token: { name: 'ro', scope: 'read' } },
      });
      expect(narrow.body).toMatchObject({ status: 1, scope: 'read' });
      const listed = await developer.call('GET', '/token');
      expect(listed.body.tokens.map((t: { scope: string }) => t.scope)).toEqual(['full', 'read']);
      const bad = await call(h().app, 'POST', '/token', {
        token: account.token,
        json: { token: { name: 'bad', scope: 'admin' } },
      });
      expect(bad.body).toMatchObject({ status: -7, details: expect.stringMatching(/token\.scope/) });
    });

    it('an invitation the SMTP server refuses is taken back: nobody is left invited without a link', async () => {
      const { as } = await ownerSession();
      const email = `refused-${Date.now()}@example.com`;
      sink.refuseWith = 550;
      try {
        const invited = await as('POST', '/users', { json: { user: { email, role: 'viewer' } } });
        expect(invited.body).toMatchObject({
          status: -99,
          details: expect.stringMatching(/nothing was created/),
        });
      } finally {
        sink.refuseWith = undefined;
      }
      expect((await as('GET', '/users')).body.users.map((u: { email: string }) => u.email)).not.toContain(
        email,
      );
      // Invited again once the server takes it.
      const again = await as('POST', '/users', { json: { user: { email, role: 'viewer' } } });
      expect(again.body).toMatchObject({ status: 1, user: { email, state: 'invited' } });
      await mailTo(email);
    });

    it('without SMTP the API refuses an invitation rather than create a user nobody is told about', async () => {
      const quiet = await createHarness(dialect);
      try {
        const account = await quiet.account();
        const invited = await call(quiet.app, 'POST', '/users', {
          token: account.token,
          json: { user: { email: 'nobody-told@example.com', role: 'viewer' } },
        });
        expect(invited.body).toMatchObject({ status: -7, details: expect.stringMatching(/SMTP_URL/) });
        expect((await call(quiet.app, 'GET', '/users', { token: account.token })).body.users).toHaveLength(1);
      } finally {
        await quiet.close();
      }
    });
  });
}
