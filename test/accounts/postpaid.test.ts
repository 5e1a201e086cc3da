// Postpaid accounts: sends and lookups may take the balance below zero down to minus the account's credit limit,
// never further, exactly under concurrency (the debit's conditional UPDATE); GET /credits, GET /account and
// the sub-account reads say so in SMSFactor's `postpaid` field; `pigeon account postpaid` sets it.
import { expect, it } from 'vitest';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

let seq = 0;
const fr = () => `33656${String(300_000 + ++seq).padStart(6, '0')}`;

const sms = (numbers: string[], delay?: string) => ({
  sms: {
    message: { text: 'Bonjour', ...(delay && { delay }) },
    recipients: { gsm: numbers.map((value) => ({ value })) },
  },
});
const send = (h: Harness, a: TestAccount, count: number, delay?: string) =>
  call(h.app, 'POST', '/send', { token: a.token, json: sms(Array.from({ length: count }, fr), delay) });

async function ledgerSum(h: Harness, accountId: number) {
  const rows = await h.deps.store.db
    .selectFrom('credit_ledger')
    .select('delta')
    .where('account_id', '=', accountId)
    .execute();
  return rows.reduce((sum, r) => sum + Number(r.delta), 0);
}

describeEachDialect('postpaid accounts', (h) => {
  it('a prepaid account reports postpaid "0" and is refused at zero, as before', async () => {
    const a = await h().account({ credits: 2 });
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body).toEqual({
      status: 1,
      message: 'OK',
      credits: 2,
      postpaid: '0',
      unlimited: '0',
    });
    expect((await call(h().app, 'GET', '/account', { token: a.token })).body.account.postpaid).toBe('0');
    expect((await send(h(), a, 3)).body).toMatchObject({
      status: -3,
      details: 'this send costs 3 credits and 2 are available',
    });
  });

  it('a postpaid account sends below zero down to minus its limit, never further; its reads say postpaid "1"', async () => {
    const parent = await h().account({ credits: 5 });
    const child = await h().account({ parentId: parent.id, unlimited: true, credits: 0 });
    await h().deps.services.credits.setPostpaid(parent.id, 10);
    expect((await call(h().app, 'GET', '/credits', { token: parent.token })).body).toEqual({
      status: 1,
      message: 'OK',
      credits: 5,
      postpaid: '1',
      credit_limit: 10,
      unlimited: '0',
    });
    expect((await call(h().app, 'GET', '/account', { token: parent.token })).body.account.postpaid).toBe('1');
    const subs = await call(h().app, 'GET', '/sub-accounts', { token: parent.token });
    expect(subs.body['sub-accounts'][0].postpaid).toBe('0');

    // The unlimited sub-account spends its parent's balance, down to the parent's limit.
    expect((await send(h(), child, 8)).body).toMatchObject({ status: 1, cost: 8, credits: -3 });
    const simulated = await call(h().app, 'POST', '/send/simulate', {
      token: parent.token,
      json: sms([fr(), fr()]),
    });
    expect(simulated.body).toMatchObject({ status: 1, cost: 2, credits: -5 });
    const tooDear = await call(h().app, 'POST', '/send/simulate', {
      token: parent.token,
      json: sms(Array.from({ length: 8 }, fr)),
    });
    expect(tooDear.body).toMatchObject({
      status: -3,
      details: 'this send costs 8 credits and 7 are available (balance -3, postpaid down to -10)',
    });
    expect((await send(h(), parent, 8)).body).toMatchObject({
      status: -3,
      details: 'this send costs 8 credits and 7 are available (balance -3, postpaid down to -10)',
    });
    const cancelled = await send(h(), parent, 7, '2030-06-01 10:00:00');
    expect(cancelled.body).toMatchObject({ status: 1, credits: -10 });
    expect((await send(h(), parent, 1)).body.status).toBe(-3);
    // A refund on a balance below zero gives the credits back.
    const refund = await call(h().app, 'DELETE', `/send/${cancelled.body.ticket}`, { token: parent.token });
    expect(refund.body).toEqual({ status: 1, message: 'OK', credits: -3 });
    // A transfer moves credits the account has, never its credit limit.
    const transfer = await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      json: {
        transfer: {
          to_account: String((await h().account({ parentId: parent.id, credits: 0 })).id),
          credits: '1',
        },
      },
    });
    expect(transfer.body.status).toBe(-3);
    // Prepaid again: the balance stays as it is, and nothing more is debited below zero.
    await h().deps.services.credits.setPostpaid(parent.id, null);
    expect((await call(h().app, 'GET', '/credits', { token: parent.token })).body).toMatchObject({
      credits: -3,
      postpaid: '0',
    });
    expect((await send(h(), parent, 1)).body.status).toBe(-3);
    // The ledger (its initial line included) sums to the balance.
    expect(await ledgerSum(h(), parent.id)).toBe(-3);
  });

  it('64 concurrent sends never take the balance below minus the limit, and the ledger sums to the balance', async () => {
    const a = await h().account({ credits: 10 });
    await h().deps.services.credits.setPostpaid(a.id, 50);
    const results = await Promise.all(Array.from({ length: 64 }, () => send(h(), a, 1)));
    const accepted = results.filter((r) => r.body.status === 1);
    const refused = results.filter((r) => r.body.status === -3);
    expect(accepted).toHaveLength(60);
    expect(refused).toHaveLength(4);
    const balance = (await call(h().app, 'GET', '/credits', { token: a.token })).body.credits;
    expect(balance).toBe(-50);
    expect(await ledgerSum(h(), a.id)).toBe(-50);
    const lowest = Math.min(...accepted.map((r) => r.body.credits));
    expect(lowest).toBe(-50);
  });

  it('pigeon account postpaid sets and lifts the limit; bad input is refused', async () => {
    const a = await h().account({ credits: 0 });
    const on = await pigeonOn(h().databaseUrl, 'account', 'postpaid', String(a.id), '--limit', '25');
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({
      account_id: String(a.id),
      postpaid: '1',
      credit_limit: 25,
      credits: 0,
    });
    expect((await send(h(), a, 2)).body).toMatchObject({ status: 1, credits: -2 });
    const off = await pigeonOn(h().databaseUrl, 'account', 'postpaid', String(a.id), '--off');
    expect(JSON.parse(off.stdout)).toEqual({
      account_id: String(a.id),
      postpaid: '0',
      credit_limit: null,
      credits: -2,
    });
    const neither = await pigeonOn(h().databaseUrl, 'account', 'postpaid', String(a.id));
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('account postpaid needs --limit N (credits below zero) or --off');
    const negative = await pigeonOn(h().databaseUrl, 'account', 'postpaid', String(a.id), '--limit=-4');
    expect(negative.code).toBe(1);
    expect(negative.stderr).toContain('--limit "-4" must be a whole number of credits, 0 or more');
  }, 120_000);
});
