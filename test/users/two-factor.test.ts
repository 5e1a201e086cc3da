// TOTP two-factor for console users, on both dialects: enrolment confirmed by a first code, ten recovery
// codes shown once (hashes kept), a two-step sign-in whose code works once, recovery codes used once, the
// brake on wrong codes, disabling with password and code, and the operator's clearing for a lost phone.
import { describe, expect, it } from 'vitest';
import { maxCodeFailures } from '../../src/users/recovery.service.ts';
import { base32Decode, recoveryCodeHash, totp } from '../../src/users/totp.ts';
import { pigeonOn } from '../helpers/cli.ts';
import {
  availableDialects,
  call,
  createHarness,
  describeEachDialect,
  type Harness,
} from '../helpers/harness.ts';
import { auditActionsOf, signedInUser, userPassword } from './users-fixture.ts';

/** The console's sign-in, step by step: the password's answer, then (code_needed) the code's. */
function signInSteps(h: () => Harness) {
  return {
    password: (email: string, password = userPassword) =>
      call(h().app, 'POST', '/console/session', { json: { email, password } }),
    code: (pendingToken: unknown, code: string) =>
      call(h().app, 'POST', '/console/session/code', { json: { pending_token: pendingToken, code } }),
  };
}

/** A signed-in user with two-factor on: its secret and recovery codes. */
async function userWithTwoFactor(h: Harness) {
  const account = await h.account();
  const user = await signedInUser(h, account.id, 'sender');
  const enrolled = await user.call('POST', '/users/me/two-factor');
  expect(enrolled.body).toMatchObject({ status: 1, two_factor: { secret: expect.any(String) } });
  const secret = base32Decode(enrolled.body.two_factor.secret as string)!;
  const confirmed = await user.call('PUT', '/users/me/two-factor', {
    json: { user: { code: totp(secret, h.clock.now()) } },
  });
  expect(confirmed.body.status, JSON.stringify(confirmed.body)).toBe(1);
  return { user, secret, enrolled, recoveryCodes: confirmed.body.recovery_codes as string[] };
}

describeEachDialect('two-factor sign-in of console users', (h) => {
  const steps = signInSteps(h);
  const nextStep = () => h().clock.advance(30_000);

  it('enrolment shows the secret and its otpauth link once; a first code turns it on with ten recovery codes', async () => {
    const account = await h().account();
    const user = await signedInUser(h(), account.id, 'viewer');
    expect((await user.call('GET', '/users/me')).body.user).toMatchObject({ two_factor: false });
    const enrolled = await user.call('POST', '/users/me/two-factor');
    const { secret, otpauth_uri } = enrolled.body.two_factor;
    expect(otpauth_uri).toContain(`secret=${secret}`);
    expect(decodeURIComponent(otpauth_uri)).toContain(`Pigeon:${user.email}`);
    // A wrong first code leaves it off.
    const wrong = await user.call('PUT', '/users/me/two-factor', { json: { user: { code: '000000' } } });
    expect(wrong.body.status).toBe(-7);
    expect((await steps.password(user.email)).body.session, 'still one step').toBeDefined();

    const code = totp(base32Decode(secret)!, h().clock.now());
    const confirmed = await user.call('PUT', '/users/me/two-factor', { json: { user: { code } } });
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirmed.body.recovery_codes).size).toBe(10);
    expect((await user.call('GET', '/users/me')).body.user).toMatchObject({
      two_factor: true,
      recovery_codes_left: 10,
    });
    // Only hashes are stored.
    const stored = await h()
      .deps.store.db.selectFrom('user_recovery_codes')
      .select('code_hash')
      .where('user_id', '=', user.id)
      .execute();
    expect(stored.map((r) => r.code_hash).sort()).toEqual(
      (confirmed.body.recovery_codes as string[]).map(recoveryCodeHash).sort(),
    );
    // On already: a new enrolment is refused.
    expect((await user.call('POST', '/users/me/two-factor')).body.status).toBe(-7);
  });

  it('the password step answers code_needed without a session; a code opens it, once', async () => {
    const { user, secret } = await userWithTwoFactor(h());
    nextStep();
    const first = await steps.password(user.email);
    expect(first.body).toMatchObject({ status: 1, code_needed: true, pending_token: expect.any(String) });
    expect(first.body.session).toBeUndefined();
    expect(first.headers['set-cookie']).toBeUndefined();
    // A wrong password still answers -1, never code_needed.
    expect((await steps.password(user.email, 'not the password at all')).body.status).toBe(-1);

    expect((await steps.code(first.body.pending_token, '123456')).body.status).toBe(-1);
    const code = totp(secret, h().clock.now());
    const opened = await steps.code(first.body.pending_token, code);
    expect(opened.body.session).toMatchObject({ email: user.email, role: 'sender' });
    expect(String(opened.headers['set-cookie'])).toMatch(/pigeon_session=/);
    // The same step again, and the same code in a new sign-in: refused.
    expect((await steps.code(first.body.pending_token, code)).body.status).toBe(-1);
    const second = await steps.password(user.email);
    expect((await steps.code(second.body.pending_token, code)).body).toMatchObject({
      status: -1,
      details: expect.stringMatching(/already used/),
    });
    // The next time step's code works.
    nextStep();
    expect((await steps.code(second.body.pending_token, totp(secret, h().clock.now()))).body.status).toBe(1);
    // Each session opened by a code is a sign-in of the audit log (after the fixture's own first sign-in).
    expect((await auditActionsOf(h(), user.id)).filter((a) => a === 'session.sign_in')).toHaveLength(3);
  });

  it('a pending sign-in expires after five minutes', async () => {
    const { user, secret } = await userWithTwoFactor(h());
    nextStep();
    const pending = await steps.password(user.email);
    h().clock.advance(5 * 60_000 + 1);
    const late = await steps.code(pending.body.pending_token, totp(secret, h().clock.now()));
    expect(late.body).toMatchObject({ status: -1, details: expect.stringMatching(/expired/) });
  });

  it('a recovery code stands for a code once', async () => {
    const { user, recoveryCodes } = await userWithTwoFactor(h());
    const pending = await steps.password(user.email);
    const used = await steps.code(pending.body.pending_token, recoveryCodes[3]!.toUpperCase());
    expect(used.body.session).toMatchObject({ email: user.email });
    const again = await steps.password(user.email);
    expect((await steps.code(again.body.pending_token, recoveryCodes[3]!)).body.status).toBe(-1);
    expect((await steps.code(again.body.pending_token, recoveryCodes[4]!)).body.status).toBe(1);
    expect((await user.call('GET', '/users/me')).body.user.recovery_codes_left).toBe(8);
  });

  it('disabling needs the password and a code; then the password alone signs in', async () => {
    const { user, secret } = await userWithTwoFactor(h());
    nextStep();
    const disable = (password: string, code: string) =>
      user.call('DELETE', '/users/me/two-factor', { json: { user: { password, code } } });
    const code = totp(secret, h().clock.now());
    expect((await disable('not the password at all', code)).body.status).toBe(-1);
    expect((await disable(userPassword, '000000')).body.status).toBe(-1);
    expect((await user.call('GET', '/users/me')).body.user.two_factor).toBe(true);
    expect((await disable(userPassword, code)).body.status).toBe(1);
    expect((await user.call('GET', '/users/me')).body.user).toMatchObject({
      two_factor: false,
      recovery_codes_left: 0,
    });
    expect((await steps.password(user.email)).body.session).toMatchObject({ email: user.email });
    const actions = await auditActionsOf(h(), user.id);
    expect(actions.filter((a) => a.startsWith('user.two_factor'))).toEqual([
      'user.two_factor_enrol',
      'user.two_factor_on',
      'user.two_factor_off',
    ]);
  });

  it('new recovery codes need the password and a code; the old ones stop working', async () => {
    const { user, secret, recoveryCodes } = await userWithTwoFactor(h());
    nextStep();
    const renew = (password: string, code: string) =>
      user.call('POST', '/users/me/two-factor/recovery-codes', { json: { user: { password, code } } });
    const code = totp(secret, h().clock.now());
    expect((await renew('not the password at all', code)).body.status).toBe(-1);
    expect((await renew(userPassword, '000000')).body.status).toBe(-1);
    const renewed = await renew(userPassword, code);
    expect(renewed.body.status, JSON.stringify(renewed.body)).toBe(1);
    const fresh = renewed.body.recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => recoveryCodes.includes(c))).toEqual([]);
    // The code just used is spent; a recovery code stands for one.
    expect((await renew(userPassword, code)).body.status).toBe(-1);
    expect((await renew(userPassword, recoveryCodes[0]!)).body.status).toBe(-1);
    expect((await user.call('GET', '/users/me')).body.user.recovery_codes_left).toBe(10);
    const pending = await steps.password(user.email);
    expect((await steps.code(pending.body.pending_token, recoveryCodes[1]!)).body.status).toBe(-1);
    const again = await steps.password(user.email);
    expect((await steps.code(again.body.pending_token, fresh[0]!)).body.session).toMatchObject({
      email: user.email,
    });
    const actions = await auditActionsOf(h(), user.id);
    expect(actions.filter((a) => a.startsWith('user.two_factor') || a.startsWith('user.recovery'))).toEqual([
      'user.two_factor_enrol',
      'user.two_factor_on',
      'user.recovery_codes_renew',
    ]);
  });

  it("the operator's `pigeon user reset-password --clear-2fa` turns two-factor off (a lost phone)", async () => {
    const { user } = await userWithTwoFactor(h());
    const plain = await pigeonOn(h().databaseUrl, 'user', 'reset-password', String(user.id));
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout).two_factor_cleared).toBeUndefined();
    expect((await steps.password(user.email)).body.code_needed, 'still on').toBe(true);
    const cleared = await pigeonOn(h().databaseUrl, 'user', 'reset-password', String(user.id), '--clear-2fa');
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ email: user.email, two_factor_cleared: true });
    expect((await steps.password(user.email)).body.session).toMatchObject({ email: user.email });
  }, 120_000);

  it(`a pending sign-in takes ${maxCodeFailures} wrong codes, then asks for the password again`, async () => {
    const { user, secret } = await userWithTwoFactor(h());
    nextStep();
    const pending = await steps.password(user.email);
    for (let i = 0; i < maxCodeFailures; i++) {
      expect((await steps.code(pending.body.pending_token, '000000')).body.status).toBe(-1);
    }
    const right = totp(secret, h().clock.now());
    expect((await steps.code(pending.body.pending_token, right)).body).toMatchObject({
      status: -1,
      details: expect.stringMatching(/sign in again/),
    });
    const again = await steps.password(user.email);
    expect((await steps.code(again.body.pending_token, right)).body.status).toBe(1);
  });
});

for (const dialect of availableDialects()) {
  describe(`wrong two-factor codes and reset requests count toward the sign-in brake [${dialect}]`, () => {
    it('after RATE_LIMIT_AUTH_FAILURES wrong codes, even the right one is refused (429)', async () => {
      const h = await createHarness(dialect, { RATE_LIMIT_AUTH_FAILURES: '3', RATE_LIMIT_AUTH_WINDOW: '1h' });
      try {
        const steps = signInSteps(() => h);
        const { user, secret } = await userWithTwoFactor(h);
        h.clock.advance(30_000);
        const pending = await steps.password(user.email);
        for (const wrong of ['111111', '222222', '333333']) {
          expect((await steps.code(pending.body.pending_token, wrong)).body.status).toBe(-1);
        }
        const braked = await steps.code(pending.body.pending_token, totp(secret, h.clock.now()));
        expect(braked.httpCode).toBe(429);
        expect(braked.body.status).toBe(-1);
      } finally {
        await h.close();
      }
    });

    it('every reset request counts toward the brake, whoever the e-mail is', async () => {
      const h = await createHarness(dialect, { RATE_LIMIT_AUTH_FAILURES: '3', RATE_LIMIT_AUTH_WINDOW: '1h' });
      try {
        const forgot = (email: string) => call(h.app, 'POST', '/users/forgot', { json: { user: { email } } });
        for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
          expect((await forgot(email)).httpCode).toBe(200);
        }
        expect((await forgot('d@example.com')).httpCode).toBe(429);
      } finally {
        await h.close();
      }
    });
  });
}
