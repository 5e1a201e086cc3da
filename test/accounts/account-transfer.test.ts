// POST /account/transfer: credits move between a parent and its own sub-accounts only, in one transaction with
// a ledger line on each side, never below zero and exactly under concurrency; a giving parent that reaches
// its alert trigger raises its BALANCE_ALERT.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

const ledgerOf = async (h: Harness, accountId: number) =>
  (
    await h.deps.store.db
      .selectFrom('credit_ledger')
      .select(['delta', 'balance_after', 'reason', 'campaign_id'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute()
  ).map((l) => ({ ...l, delta: Number(l.delta), balance_after: Number(l.balance_after) }));

describeEachDialect('credit transfer', (h) => {
  const transfer = (from: TestAccount, toAccount: unknown, credits: unknown, accept?: string) =>
    call(h().app, 'POST', '/account/transfer', {
      token: from.token,
      json: { transfer: { to_account: toAccount, credits } },
      accept,
    });

  const creditsOf = async (a: TestAccount) =>
    (await call(h().app, 'GET', '/credits', { token: a.token })).body.credits;

  it('moves credits to a sub-account and takes them back, with a ledger line on each side', async () => {
    const parent = await h().account({ credits: 100 });
    const child = await h().account({ parentId: parent.id, credits: 0 });
    const given = await transfer(parent, String(child.id), 30);
    expect(given.body).toEqual({ status: 1, message: 'OK', credits: 70, child_credits: 30 });
    const back = await transfer(parent, child.id, '-12');
    expect(back.body).toEqual({ status: 1, message: 'OK', credits: 82, child_credits: 18 });
    expect(await creditsOf(parent)).toBe(82);
    expect(await creditsOf(child)).toBe(18);
    expect((await ledgerOf(h(), parent.id)).slice(1)).toEqual([
      { delta: -30, balance_after: 70, reason: `transfer to account ${child.id}`, campaign_id: null },
      { delta: 12, balance_after: 82, reason: `transfer from account ${child.id}`, campaign_id: null },
    ]);
    expect(await ledgerOf(h(), child.id)).toEqual([
      { delta: 30, balance_after: 30, reason: `transfer from account ${parent.id}`, campaign_id: null },
      { delta: -12, balance_after: 18, reason: `transfer to account ${parent.id}`, campaign_id: null },
    ]);

    const xml = await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      xml: `<transfer><to_account>${child.id}</to_account><credits>2</credits></transfer>`,
    });
    expect(xml.contentType).toContain('application/xml');
    expect(xml.body).toEqual({ status: '1', message: 'OK', credits: '80', child_credits: '20' });
  });

  it('never takes a balance below zero: -3, and nothing moves', async () => {
    const parent = await h().account({ credits: 10 });
    const child = await h().account({ parentId: parent.id, credits: 4 });
    const short = await transfer(parent, child.id, 11);
    expect(short.body).toEqual({
      status: -3,
      message: 'Not enough credits',
      details: 'this transfer needs 11 credits and 10 are available',
    });
    const childShort = await transfer(parent, child.id, -5);
    expect(childShort.body).toEqual({
      status: -3,
      message: 'Not enough credits',
      details: `sub-account ${child.id} has 4 credits: 5 cannot be taken back`,
    });
    expect(await creditsOf(parent)).toBe(10);
    expect(await creditsOf(child)).toBe(4);
    expect(await ledgerOf(h(), child.id)).toHaveLength(1);
    // Everything there is may go.
    expect((await transfer(parent, child.id, 10)).body).toMatchObject({ credits: 0, child_credits: 14 });
  });

  it('credits must be a non-zero whole number; an unlimited sub-account takes no transfer (-7)', async () => {
    const parent = await h().account({ credits: 10 });
    const child = await h().account({ parentId: parent.id });
    const unlimited = await h().account({ parentId: parent.id, unlimited: true, credits: 0 });
    for (const credits of [0, '0', 1.5, 'abc', '', '1e3', ' ']) {
      const r = await transfer(parent, child.id, credits);
      expect(r.body.status, String(credits)).toBe(-7);
      expect(r.body.details).toBe(
        `transfer.credits "${credits}" must be a non-zero whole number of credits (negative takes them back)`,
      );
    }
    const missing = await call(h().app, 'POST', '/account/transfer', {
      token: parent.token,
      json: { transfer: { to_account: child.id } },
    });
    expect(missing.body).toMatchObject({ status: -7, details: 'transfer.credits is required' });
    const r = await transfer(parent, unlimited.id, 5);
    expect(r.body).toMatchObject({
      status: -7,
      details: `transfer.to_account ${unlimited.id} is an unlimited sub-account: it spends this account's credits, so none are transferred to or from it`,
    });
    expect(await creditsOf(parent)).toBe(10);
  });

  it("a token of A gets -5 transferring to B's sub-accounts, to itself, its parent or unknown ids", async () => {
    const a = await h().account({ credits: 100 });
    const aChild = await h().account({ parentId: a.id, credits: 100 });
    const b = await h().account({ credits: 100 });
    const bChild = await h().account({ parentId: b.id, credits: 100 });
    for (const [from, to] of [
      [a, bChild.id],
      [a, b.id],
      [a, a.id],
      [aChild, a.id],
      [a, 999999999],
      [a, 'abc'],
    ] as const) {
      for (const credits of [5, -5]) {
        const r = await transfer(from, to, credits);
        expect(r.body).toEqual({
          status: -5,
          message: 'Resource not found',
          details: `account "${to}" is not a sub-account of this account`,
        });
      }
    }
    for (const account of [a, aChild, b, bChild]) expect(await creditsOf(account)).toBe(100);
  });

  it('concurrent transfers both ways are exact: no lost update, no balance below zero', async () => {
    const parent = await h().account({ credits: 20 });
    const one = await h().account({ parentId: parent.id, credits: 0 });
    const two = await h().account({ parentId: parent.id, credits: 10 });
    const requests = [
      ...Array.from({ length: 15 }, () => transfer(parent, one.id, 2)),
      ...Array.from({ length: 10 }, () => transfer(parent, two.id, -1)),
      ...Array.from({ length: 5 }, () => transfer(parent, two.id, 1)),
    ];
    const results = await Promise.all(requests);
    for (const r of results) expect([1, -3]).toContain(r.body.status);
    const ok = results.filter((r) => r.body.status === 1);
    const parentCredits = await creditsOf(parent);
    const oneCredits = await creditsOf(one);
    const twoCredits = await creditsOf(two);
    // Credits are neither created nor lost, and every balance agrees with its ledger.
    expect(parentCredits + oneCredits + twoCredits).toBe(30);
    for (const [account, credits] of [
      [parent, parentCredits],
      [one, oneCredits],
      [two, twoCredits],
    ] as const) {
      expect(credits).toBeGreaterThanOrEqual(0);
      const ledger = await ledgerOf(h(), account.id);
      expect(ledger.reduce((sum, l) => sum + l.delta, 0)).toBe(credits);
      if (ledger.length > 0) expect(ledger.at(-1)!.balance_after).toBe(credits);
    }
    expect((await ledgerOf(h(), one.id)).length).toBe(oneCredits / 2);
    // Each success wrote one line on each side.
    expect((await ledgerOf(h(), parent.id)).length).toBe(1 + ok.length);
  });

  it("a transfer that takes the parent to its trigger raises the parent's BALANCE_ALERT once", async () => {
    const parent = await h().account({ credits: 100 });
    const child = await h().account({ parentId: parent.id, credits: 0 });
    const set = await call(h().app, 'PUT', '/notification/balance', {
      token: parent.token,
      json: { notification: { alert_trigger: '50' } },
    });
    expect(set.body.status).toBe(1);
    const alerts = async () =>
      (
        await h()
          .deps.store.db.selectFrom('events')
          .select('payload')
          .where('account_id', '=', parent.id)
          .where('type', '=', 'BALANCE_ALERT')
          .execute()
      ).map((e) => JSON.parse(e.payload));
    await transfer(parent, child.id, 40);
    expect(await alerts()).toEqual([]);
    await transfer(parent, child.id, 10);
    expect(await alerts()).toEqual([{ balance: 50, trigger: 50, date: expect.any(String) }]);
    await transfer(parent, child.id, 5);
    expect(await alerts()).toHaveLength(1);
    // Taking credits back above the trigger re-arms it.
    await transfer(parent, child.id, -20);
    await transfer(parent, child.id, 20);
    expect((await alerts()).map((a) => a.balance)).toEqual([50, 45]);
  });
});
