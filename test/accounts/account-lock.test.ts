// GET /account/:id/lock and /unlock: a parent locks its own sub-accounts only; a locked sub-account's tokens
// and credentials answer -1 at once, and its queued messages wait, unsent, until it is unlocked.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveringWorkers } from '../helpers/worker.ts';

// Numbers ending 0000–0002 are the simulator's failures: these end in 5 and more.
const number = (n: number) => `33612${String(n).padStart(4, '0')}55`;

describeEachDialect('account lock', (h) => {
  const startWorker = deliveringWorkers(h);

  async function send(account: TestAccount, recipients: string[], extra: Record<string, unknown> = {}) {
    const r = await call(h().app, 'POST', '/send', {
      token: account.token,
      json: {
        sms: {
          message: { text: 'Hello', pushtype: 'alert', sender: 'Pigeon', ...extra },
          recipients: { gsm: recipients.map((value) => ({ value })) },
        },
      },
    });
    expect(r.body.status, r.body.details).toBe(1);
    return Number(r.body.ticket);
  }

  const statesOf = async (ticket: number) =>
    (
      await h()
        .deps.store.db.selectFrom('messages')
        .select('state')
        .where('campaign_id', '=', ticket)
        .orderBy('seq')
        .execute()
    ).map((m) => m.state);

  const lockedDetails = (id: number) =>
    `account ${id} is locked by its parent account: it cannot use the API until unlocked`;

  it('a locked sub-account gets -1 at once, in JSON and XML; unlocked, it works again', async () => {
    const parent = await h().account();
    const child = await h().account({ parentId: parent.id });
    // Used once, so this process knows the token when the lock comes.
    expect((await call(h().app, 'GET', '/credits', { token: child.token })).body.status).toBe(1);

    const locked = await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token });
    expect(locked.body).toEqual({ status: 1, message: 'OK', state: 'locked' });
    const refused = await call(h().app, 'GET', '/credits', { token: child.token });
    expect(refused.body).toEqual({
      status: -1,
      message: 'Authentication error',
      details: lockedDetails(child.id),
    });
    expect(refused.httpCode).toBe(200);
    // A token created for it meanwhile is refused as well.
    const fresh = await call(h().app, 'POST', `/token/account/${child.id}`, {
      token: parent.token,
      json: { token: { name: 'fresh' } },
    });
    expect((await call(h().app, 'GET', '/account', { token: fresh.body.token })).body.status).toBe(-1);

    const sub = await call(h().app, 'GET', `/sub-accounts/${child.id}`, { token: parent.token });
    expect(sub.body['sub-account']).toMatchObject({ status: 0, state: 'locked' });

    // Locking again changes nothing and says so.
    const again = await call(h().app, 'GET', `/account/${child.id}/lock`, {
      token: parent.token,
      accept: 'application/xml',
    });
    expect(again.body).toEqual({ status: '1', message: 'OK', state: 'locked' });

    const unlocked = await call(h().app, 'GET', `/account/${child.id}/unlock`, { token: parent.token });
    expect(unlocked.body).toEqual({ status: 1, message: 'OK', state: 'unlocked' });
    expect((await call(h().app, 'GET', '/credits', { token: child.token })).body.status).toBe(1);
    const xml = await call(h().app, 'GET', `/account/${child.id}/unlock`, {
      token: parent.token,
      accept: 'application/xml',
    });
    expect(xml.body).toEqual({ status: '1', message: 'OK', state: 'unlocked' });
    const read = await call(h().app, 'GET', '/account', { token: child.token });
    expect(read.body.account).toMatchObject({ status: 1, state: 'active' });
  });

  it('a lock made by another process takes effect within a second', async () => {
    const parent = await h().account();
    const child = await h().account({ parentId: parent.id });
    expect((await call(h().app, 'GET', '/credits', { token: child.token })).body.status).toBe(1);
    await h().deps.store.db.updateTable('accounts').set({ locked: 1 }).where('id', '=', child.id).execute();
    h().clock.advance(1_000);
    const after = await call(h().app, 'GET', '/credits', { token: child.token });
    expect(after.body).toMatchObject({ status: -1, details: lockedDetails(child.id) });
  });

  it("a token of A gets -5 locking or unlocking B's sub-accounts, itself, its parent or unknown ids", async () => {
    const a = await h().account();
    const aChild = await h().account({ parentId: a.id });
    const b = await h().account();
    const bChild = await h().account({ parentId: b.id });
    for (const [token, id] of [
      [a.token, bChild.id],
      [a.token, b.id],
      [a.token, a.id],
      [aChild.token, a.id],
      [a.token, 999999999],
      [a.token, 'x1'],
    ] as const) {
      for (const action of ['lock', 'unlock']) {
        const r = await call(h().app, 'GET', `/account/${id}/${action}`, { token });
        expect(r.body).toEqual({
          status: -5,
          message: 'Resource not found',
          details: `account "${id}" is not a sub-account of this account`,
        });
      }
    }
    // B's sub-account was never locked.
    expect((await call(h().app, 'GET', '/credits', { token: bChild.token })).body.status).toBe(1);
    expect((await call(h().app, 'GET', '/credits', { token: aChild.token })).body.status).toBe(1);
  });

  it("a locked sub-account's queued messages are not sent until it is unlocked, then all are delivered", async () => {
    const parent = await h().account({ credits: 100 });
    const child = await h().account({ parentId: parent.id, credits: 100 });
    const other = await h().account({ credits: 100 });
    const now = await send(child, [number(1), number(2), number(3)]);
    // A scheduled campaign is held too, and keeps its time.
    const later = await send(child, [number(4)], { delay: '2026-01-05 11:00:00' });
    const dueBefore = await h()
      .deps.store.db.selectFrom('messages')
      .select('due_at')
      .where('campaign_id', '=', later)
      .executeTakeFirstOrThrow();
    expect(
      (await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token })).body.state,
    ).toBe('locked');
    expect(await statesOf(now)).toEqual(['held', 'held', 'held']);
    expect(await statesOf(later)).toEqual(['held']);

    await startWorker();
    // Another account's campaign, queued after the held one, goes out: the worker has claimed past it.
    const passing = await send(other, [number(9)]);
    await waitFor(async () => (await statesOf(passing))[0] === 'delivered', 'the other account delivered');
    expect(await statesOf(now)).toEqual(['held', 'held', 'held']);

    expect(
      (await call(h().app, 'GET', `/account/${child.id}/unlock`, { token: parent.token })).body.state,
    ).toBe('unlocked');
    await waitFor(
      async () => (await statesOf(now)).every((s) => s === 'delivered'),
      'the unlocked campaign delivered',
    );
    // The scheduled one waits for its time, as before the lock.
    expect(await statesOf(later)).toEqual(['queued']);
    const dueAfter = await h()
      .deps.store.db.selectFrom('messages')
      .select('due_at')
      .where('campaign_id', '=', later)
      .executeTakeFirstOrThrow();
    expect(Number(dueAfter.due_at)).toBe(Number(dueBefore.due_at));
    const campaign = await call(h().app, 'GET', `/campaign/${now}`, { token: child.token });
    expect(campaign.body.campaign[0]).toMatchObject({ total: 3, delivered: 3 });
    // Unlocked, the scheduled campaign can still be cancelled: its messages were never taken.
    const cancelled = await call(h().app, 'DELETE', `/send/${later}`, { token: child.token });
    expect(cancelled.body.status, cancelled.body.details).toBe(1);
  });

  it('a send authenticated just before the lock commits nothing', async () => {
    const parent = await h().account({ credits: 100 });
    const child = await h().account({ parentId: parent.id, credits: 10 });
    const auth = { accountId: child.id, tokenId: 0, parentId: parent.id };
    await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token });
    await expect(
      h().deps.services.sending.send(auth, { text: 'Hello', pushtype: 'alert' }, [{ value: number(20) }], {
        simulate: false,
      }),
    ).rejects.toMatchObject({ status: -1, details: lockedDetails(child.id) });
    const campaigns = await h()
      .deps.store.db.selectFrom('campaigns')
      .select('id')
      .where('account_id', '=', child.id)
      .execute();
    expect(campaigns).toEqual([]);
    expect((await h().deps.services.credits.credits(child.id)).valueOf()).toBe(10);
  });

  it('messages a worker has already taken are not held: they finish normally', async () => {
    const parent = await h().account({ credits: 100 });
    const child = await h().account({ parentId: parent.id, credits: 100 });
    const ticket = await send(child, [number(30), number(31)]);
    // Everything due is taken, as a worker's claim would.
    const claimed = await h().deps.services.delivery.claim(1000);
    expect(claimed.filter((m) => Number(m.campaign_id) === ticket)).toHaveLength(2);
    await call(h().app, 'GET', `/account/${child.id}/lock`, { token: parent.token });
    expect(await statesOf(ticket)).toEqual(['sending', 'sending']);
    await h().deps.services.delivery.recordOutcomes(
      claimed.map((message) => ({ kind: 'submitted' as const, message, smscIds: [`lock-${message.id}`] })),
      [],
    );
    expect(await statesOf(ticket)).toEqual(['submitted', 'submitted']);
  });
});
