// A user's recovery on both dialects, with a real SMTP sink: a reset by e-mail (its link works once, for
// RESET_LINK_MINUTES, for its own user only, and ends every session; the request's answer and time say nothing
// of whether the e-mail is a user's), a password change knowing the current one, and one's sessions.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { forgotAnswer } from '../../src/users/recovery.service.ts';
import { availableDialects, call } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  auditActionsOf,
  consoleSignIn,
  linkToken,
  sessionCall,
  signedInUser,
  smtpHarness,
  userPassword,
} from './users-fixture.ts';

const newPassword = 'a brand new password of mine';

for (const dialect of availableDialects()) {
  describe(`recovery of a user's password and sessions [${dialect}]`, () => {
    const { sink, h } = smtpHarness(dialect, { RESET_LINK_MINUTES: '30' });

    const forgot = (email: string) => call(h().app, 'POST', '/users/forgot', { json: { user: { email } } });
    const accept = (token: string, password = newPassword) =>
      call(h().app, 'POST', '/users/accept', { json: { user: { token, password } } });
    /** The reset e-mails `to` received (the operator's invitation of each test user is another). */
    const mailsTo = (to: string) =>
      sink.mails.filter((m) => m.rcptTo.includes(to) && m.headers.subject === 'Set a new Pigeon password');
    /** The token of the `n`-th reset e-mail to `to` (1 for the first), once it arrived. */
    async function resetToken(to: string, n = 1): Promise<string> {
      const mail = await waitFor(() => mailsTo(to)[n - 1], `reset e-mail ${n} to ${to}`);
      const link = /https:\/\/sms\.example\.com\/console\/accept\?token=\S+/.exec(mail.text)?.[0];
      expect(link, mail.text).toBeDefined();
      return linkToken(link!);
    }
    async function user(role: 'owner' | 'viewer' = 'viewer') {
      const account = await h().account();
      return signedInUser(h(), account.id, role);
    }

    it('a reset link sets a new password once, ends every session, and the old password stops working', async () => {
      const u = await user();
      const second = await consoleSignIn(h(), u.email);
      expect((await forgot(u.email.toUpperCase())).body).toMatchObject({ status: 1, message: forgotAnswer });
      const token = await resetToken(u.email);
      // Until the link is used, nothing changes.
      expect((await u.call('GET', '/credits')).body.status).toBe(1);
      expect((await accept(token)).body).toMatchObject({ status: 1, user: { email: u.email } });
      expect((await u.call('GET', '/credits')).body).toMatchObject({ status: -1 });
      const secondCall = sessionCall(h(), second.cookie!, second.csrf!);
      expect((await secondCall('GET', '/credits')).body.status).toBe(-1);
      expect((await consoleSignIn(h(), u.email, userPassword)).answer.body.status).toBe(-1);
      expect((await consoleSignIn(h(), u.email, newPassword)).answer.body.session).toMatchObject({
        email: u.email,
      });
      // Used twice: refused, and the password stays.
      expect((await accept(token, 'yet another password here')).body).toMatchObject({
        status: -1,
        details: expect.stringMatching(/already used/),
      });
      expect((await consoleSignIn(h(), u.email, newPassword)).answer.body.status).toBe(1);
      // The audit log: the reset asked for (written after the answer), then the password set by its link.
      await waitFor(
        async () => (await auditActionsOf(h(), u.id)).includes('user.set_password'),
        'the entries',
      );
      expect((await auditActionsOf(h(), u.id)).filter((a) => a.startsWith('user.')).slice(-2)).toEqual([
        'user.reset_requested',
        'user.set_password',
      ]);
    });

    it('a reset link expires after RESET_LINK_MINUTES, and a newer one replaces it', async () => {
      const u = await user();
      await forgot(u.email);
      const first = await resetToken(u.email);
      h().clock.advance(30 * 60_000 + 1);
      expect((await accept(first)).body).toMatchObject({
        status: -1,
        details: expect.stringMatching(/expired/),
      });
      await forgot(u.email);
      const second = await resetToken(u.email, 2);
      await forgot(u.email);
      const third = await resetToken(u.email, 3);
      expect((await accept(second)).body.status, 'a newer link replaced it').toBe(-1);
      h().clock.advance(29 * 60_000);
      expect((await accept(third)).body.status).toBe(1);
      expect((await consoleSignIn(h(), u.email, userPassword)).answer.body.status).toBe(-1);
    });

    it("a link sets its own user's password only; a guessed or altered token is refused", async () => {
      const a = await user();
      const b = await user();
      await forgot(a.email);
      await forgot(b.email);
      const tokenA = await resetToken(a.email);
      const tokenB = await resetToken(b.email);
      expect((await accept(tokenA)).body).toMatchObject({ status: 1, user: { email: a.email } });
      // B's password and session are untouched, and B's link still works for B alone.
      expect((await b.call('GET', '/credits')).body.status).toBe(1);
      expect((await consoleSignIn(h(), b.email, userPassword)).answer.body.status).toBe(1);
      for (const guess of [
        randomBytes(32).toString('base64url'),
        `${tokenB.slice(0, -1)}${tokenB.endsWith('A') ? 'B' : 'A'}`,
        '',
      ]) {
        expect((await accept(guess)).body.status, guess).toBeLessThan(0);
      }
      expect((await accept(tokenB, 'the password of b, at last')).body).toMatchObject({
        status: 1,
        user: { email: b.email },
      });
      expect((await consoleSignIn(h(), a.email, 'the password of b, at last')).answer.body.status).toBe(-1);
    });

    it('the answer is the same whether or not the e-mail is a user’s, and nothing is sent to a stranger', async () => {
      const u = await user();
      const stranger = `nobody-${randomBytes(5).toString('hex')}@example.com`;
      const unknown = await forgot(stranger);
      const known = await forgot(u.email);
      expect(unknown.body).toEqual(known.body);
      await resetToken(u.email);
      expect(mailsTo(stranger)).toEqual([]);
      // Malformed input is refused the same way for everyone.
      expect((await forgot('not an address')).body.status).toBe(-7);
    });

    it('the answer takes the same time whether or not the e-mail is a user’s', async () => {
      const u = await user();
      const timeOf = async (email: string) => {
        const start = performance.now();
        const answer = await forgot(email);
        const elapsed = performance.now() - start;
        expect(answer.body.status).toBe(1);
        return elapsed;
      };
      const known: number[] = [];
      const strangers: number[] = [];
      // Warm both paths first, then alternate so any drift of the machine falls on both alike. The e-mail a
      // known address gets is awaited before the next request, so its sending (after the answer) is not
      // counted against the stranger measured next.
      await timeOf(u.email);
      await timeOf('warm-up@example.com');
      for (let i = 0; i < 40; i++) {
        known.push(await timeOf(u.email));
        await waitFor(() => mailsTo(u.email).length >= i + 2, `reset e-mail ${i + 2}`);
        strangers.push(await timeOf(`nobody-${i}-${randomBytes(3).toString('hex')}@example.com`));
      }
      const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
      const a = median(known);
      const b = median(strangers);
      // Awaiting the e-mail (or the link's write) in the known case alone would add a connection to the SMTP
      // server, several milliseconds, to its median.
      expect(
        Math.abs(a - b),
        `medians: known ${a.toFixed(2)} ms, unknown ${b.toFixed(2)} ms`,
      ).toBeLessThanOrEqual(1.5 + 0.5 * Math.min(a, b));
    });

    it('a password change needs the current password and the policy; the other sessions end', async () => {
      const u = await user();
      const other = await consoleSignIn(h(), u.email);
      const otherCall = sessionCall(h(), other.cookie!, other.csrf!);
      const change = (current: string, password: string) =>
        u.call('PUT', '/users/me/password', { json: { user: { current, password } } });
      expect((await change('not my password', newPassword)).body).toMatchObject({
        status: -1,
        details: expect.stringMatching(/user.current/),
      });
      expect((await change(userPassword, 'password1')).body).toMatchObject({ status: -7 });
      expect((await change(userPassword, u.email)).body).toMatchObject({ status: -7 });
      expect((await otherCall('GET', '/credits')).body.status, 'nothing changed yet').toBe(1);
      expect((await change(userPassword, newPassword)).body).toMatchObject({ status: 1 });
      expect((await u.call('GET', '/credits')).body.status, 'this session goes on').toBe(1);
      expect((await otherCall('GET', '/credits')).body.status, 'the other one ended').toBe(-1);
      expect((await consoleSignIn(h(), u.email, userPassword)).answer.body.status).toBe(-1);
      expect((await consoleSignIn(h(), u.email, newPassword)).answer.body.status).toBe(1);
      // A token has no profile.
      const account = await h().account();
      const byToken = await call(h().app, 'PUT', '/users/me/password', {
        token: account.token,
        json: { user: { current: 'x', password: newPassword } },
      });
      expect(byToken.body).toMatchObject({ status: -1, details: expect.stringMatching(/console/) });
      expect((await auditActionsOf(h(), u.id)).filter((a) => a === 'user.change_password')).toHaveLength(1);
    });

    it('one lists its sessions, ends one, and signs out everywhere', async () => {
      const u = await user();
      const other = await call(h().app, 'POST', '/console/session', {
        json: { email: u.email, password: userPassword },
        headers: { 'user-agent': 'Phone Browser/1.0' },
      });
      expect(other.body.status).toBe(1);
      const listed = await u.call('GET', '/users/me/sessions');
      expect(listed.body.status).toBe(1);
      const sessions = listed.body.sessions as { id: string; current: boolean; user_agent: string | null }[];
      expect(sessions).toHaveLength(2);
      expect(sessions.filter((s) => s.current)).toHaveLength(1);
      const phone = sessions.find((s) => !s.current)!;
      expect(phone).toMatchObject({ user_agent: 'Phone Browser/1.0', ip: '127.0.0.1' });

      // Another user's session is not one's own to end.
      const stranger = await user();
      expect((await stranger.call('DELETE', `/users/me/sessions/${phone.id}`)).body.status).toBe(-5);
      expect((await u.call('DELETE', `/users/me/sessions/${phone.id}`)).body).toMatchObject({ status: 1 });
      const after = await u.call('GET', '/users/me/sessions');
      expect(after.body.sessions).toHaveLength(1);

      await consoleSignIn(h(), u.email);
      expect((await u.call('DELETE', '/users/me/sessions')).body).toMatchObject({ status: 1 });
      expect((await u.call('GET', '/credits')).body.status, 'this session too').toBe(-1);
      const left = await h()
        .deps.store.db.selectFrom('console_sessions')
        .select('id')
        .where('user_id', '=', u.id)
        .execute();
      expect(left).toEqual([]);
      expect((await stranger.call('GET', '/credits')).body.status, "others' sessions stay").toBe(1);
      const ends = (await auditActionsOf(h(), u.id)).filter((a) => a.startsWith('session.end'));
      expect(ends).toEqual(['session.end', 'session.end_all']);
    });
  });
}
