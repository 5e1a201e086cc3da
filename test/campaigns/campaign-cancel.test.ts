// DELETE /send/:ticket: a campaign none of whose messages a worker has taken is cancelled and refunded to
// the account that paid, with a ledger line, in one transaction; anything else is refused and changes nothing.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

let numberSeq = 0;
const freshNumbers = (count: number) =>
  Array.from({ length: count }, () => ({ value: `3361${String(3000000 + ++numberSeq).padStart(7, '0')}` }));

async function send(h: Harness, a: TestAccount, recipients: number, delay?: string) {
  const message: Record<string, string> = { text: 'Rendez-vous demain', pushtype: 'alert' };
  if (delay) message.delay = delay;
  const r = await call(h.app, 'POST', '/send', {
    token: a.token,
    json: { sms: { message, recipients: { gsm: freshNumbers(recipients) } } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body as { ticket: string; cost: number; credits: number };
}

const cancel = (h: Harness, a: TestAccount, ticket: string, accept?: string) =>
  call(h.app, 'DELETE', `/send/${ticket}`, { token: a.token, accept });

async function stateOf(h: Harness, ticket: string) {
  const db = h.deps.store.db;
  const campaign = await db
    .selectFrom('campaigns')
    .select('status')
    .where('id', '=', Number(ticket))
    .executeTakeFirstOrThrow();
  const messages = await db
    .selectFrom('messages')
    .select('state')
    .where('campaign_id', '=', Number(ticket))
    .orderBy('seq')
    .execute();
  return { status: campaign.status, states: messages.map((m) => m.state) };
}

const ledgerOf = (h: Harness, accountId: number) =>
  h.deps.store.db
    .selectFrom('credit_ledger')
    .select(['delta', 'balance_after', 'campaign_id', 'reason'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();

const credits = async (h: Harness, a: TestAccount) =>
  (await call(h.app, 'GET', '/credits', { token: a.token })).body.credits;

describeEachDialect('campaign cancel', (h) => {
  it('cancels a scheduled campaign, refunds its cost with a ledger line and answers the balance', async () => {
    const a = await h().account({ credits: 100 });
    const sent = await send(h(), a, 3, '2030-06-01 10:00:00');
    expect(sent).toMatchObject({ cost: 3, credits: 97 });
    const r = await cancel(h(), a, sent.ticket);
    expect(r.body).toEqual({ status: 1, message: 'OK', credits: 100 });
    expect(await credits(h(), a)).toBe(100);
    expect(await stateOf(h(), sent.ticket)).toEqual({
      status: 'cancelled',
      states: ['cancelled', 'cancelled', 'cancelled'],
    });
    expect((await ledgerOf(h(), a.id)).slice(-2)).toEqual([
      { delta: -3, balance_after: 97, campaign_id: Number(sent.ticket), reason: 'campaign' },
      { delta: 3, balance_after: 100, campaign_id: Number(sent.ticket), reason: 'refund' },
    ]);
    const read = await call(h().app, 'GET', `/campaign/${sent.ticket}`, { token: a.token });
    expect(read.body.campaign[0]).toMatchObject({ status: 'Cancelled', state: 'cancelled', pending: 0 });
  });

  it('a refunded campaign reads back at cost 0, by id and in the list; the ledger keeps what was refunded', async () => {
    const a = await h().account({ credits: 100 });
    const sent = await send(h(), a, 2, '2030-06-01 10:00:00');
    expect(sent.cost).toBe(2);
    expect((await cancel(h(), a, sent.ticket)).body.status).toBe(1);
    const read = await call(h().app, 'GET', `/campaign/${sent.ticket}`, { token: a.token });
    expect(read.body.campaign[0].cost).toBe(0);
    const list = await call(h().app, 'GET', '/campaigns', { token: a.token });
    expect(list.body.campaigns.find((c: { id: string }) => c.id === sent.ticket).cost).toBe(0);
    expect((await ledgerOf(h(), a.id)).at(-1)).toMatchObject({ delta: 2, reason: 'refund' });
  });

  it('a cancelled campaign is never taken by the worker, even once due', async () => {
    const a = await h().account();
    const sent = await send(h(), a, 2, '2030-07-01 10:00:00');
    expect((await cancel(h(), a, sent.ticket)).body.status).toBe(1);
    const before = h().clock.now();
    h().clock.set(Date.UTC(2030, 6, 2));
    try {
      const taken = await h().deps.services.delivery.claim(10_000);
      expect(taken.filter((m) => m.campaign_id === Number(sent.ticket))).toEqual([]);
    } finally {
      h().clock.set(before);
    }
  });

  it('cancelling twice is -7 and refunds once', async () => {
    const a = await h().account({ credits: 50 });
    const sent = await send(h(), a, 2, '2030-06-01 10:00:00');
    expect((await cancel(h(), a, sent.ticket)).body.credits).toBe(50);
    const again = await cancel(h(), a, sent.ticket);
    expect(again.body).toMatchObject({ status: -7, details: `campaign ${sent.ticket} is already cancelled` });
    expect(await credits(h(), a)).toBe(50);
    expect(await ledgerOf(h(), a.id)).toHaveLength(3);
  });

  it("an unknown ticket, or another account's, is -5 and changes nothing", async () => {
    const a = await h().account();
    const b = await h().account({ credits: 20 });
    const theirs = await send(h(), b, 2, '2030-06-01 10:00:00');
    for (const ticket of [theirs.ticket, '999999999', 'abc', '0']) {
      const r = await cancel(h(), a, ticket);
      expect(r.body).toMatchObject({ status: -5, details: `campaign "${ticket}" not found` });
    }
    expect(await stateOf(h(), theirs.ticket)).toEqual({ status: 'scheduled', states: ['queued', 'queued'] });
    expect(await credits(h(), b)).toBe(18);
    expect(await credits(h(), a)).toBe(1000);
  });

  it('is refused once a worker has leased one message: nothing is cancelled or refunded', async () => {
    const a = await h().account({ credits: 10 });
    const delivery = h().deps.services.delivery;
    await delivery.claim(10_000); // whatever earlier tests left due is out of the way
    const sent = await send(h(), a, 2);
    const [leased] = await delivery.claim(1);
    expect(leased.campaign_id).toBe(Number(sent.ticket));
    const r = await cancel(h(), a, sent.ticket);
    expect(r.body).toEqual({
      status: -7,
      message: 'Data error',
      details: `campaign ${sent.ticket} cannot be cancelled: 1 of its 2 messages have already been taken for sending`,
    });
    expect((await stateOf(h(), sent.ticket)).status).toBe('scheduled');
    expect((await stateOf(h(), sent.ticket)).states.sort()).toEqual(['queued', 'sending']);
    expect(await credits(h(), a)).toBe(8);
    expect(await ledgerOf(h(), a.id)).toHaveLength(2);
  });

  it('a message back in the queue after an expired lease still counts as taken', async () => {
    const a = await h().account();
    const delivery = h().deps.services.delivery;
    await delivery.claim(10_000);
    const sent = await send(h(), a, 1);
    expect(await delivery.claim(10)).toHaveLength(1);
    const before = h().clock.now();
    h().clock.advance(h().config.LEASE_SECONDS * 1000 + 1);
    try {
      expect(await delivery.releaseExpiredLeases()).toBeGreaterThanOrEqual(1);
    } finally {
      h().clock.set(before);
    }
    expect((await stateOf(h(), sent.ticket)).states).toEqual(['queued']);
    const r = await cancel(h(), a, sent.ticket);
    expect(r.body).toMatchObject({ status: -7 });
    expect(r.body.details).toMatch(/1 of its 1 messages have already been taken/);
  });

  it("an unlimited sub-account's campaign is refunded to the parent that paid", async () => {
    const parent = await h().account({ credits: 40 });
    const child = await h().account({ parentId: parent.id, unlimited: true, credits: 0 });
    const sent = await send(h(), child, 4, '2030-06-01 10:00:00');
    expect(sent.credits).toBe(36);
    expect((await cancel(h(), child, sent.ticket)).body).toMatchObject({ status: 1, credits: 40 });
    expect(await credits(h(), parent)).toBe(40);
    expect((await ledgerOf(h(), parent.id)).at(-1)).toEqual({
      delta: 4,
      balance_after: 40,
      campaign_id: Number(sent.ticket),
      reason: 'refund',
    });
    expect(await ledgerOf(h(), child.id)).toEqual([]);
  });

  it('a campaign whose recipients were all filtered out has nothing to cancel: -7', async () => {
    const a = await h().account();
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ value: 'not a number' }] } } },
    });
    expect(r.body).toMatchObject({ status: 1, sent: 0, cost: 0 });
    const refused = await cancel(h(), a, r.body.ticket);
    expect(refused.body).toMatchObject({ status: -7 });
    expect(refused.body.details).toMatch(/has no message to cancel/);
  });

  it('racing the worker, a cancel either takes every message or none', async () => {
    const delivery = h().deps.services.delivery;
    await delivery.claim(10_000);
    let cancelled = 0;
    let refused = 0;
    for (let round = 0; round < 12; round++) {
      const a = await h().account({ credits: 100 });
      const sent = await send(h(), a, 20);
      // One side or the other starts a little later each round, so the two land in either order and overlap.
      const later = <T>(ms: number, run: () => Promise<T>) =>
        new Promise((resolve) => setTimeout(resolve, ms)).then(run);
      const [outcome, taken] = await Promise.all([
        later(round % 2 === 0 ? round % 5 : 0, () => cancel(h(), a, sent.ticket)),
        later(round % 2 === 1 ? round % 5 : 0, () => delivery.claim(round % 4 < 2 ? 7 : 50)),
      ]);
      const ticket = Number(sent.ticket);
      const ours = taken.filter((m) => m.campaign_id === ticket).length;
      const { status, states } = await stateOf(h(), sent.ticket);
      if (outcome.body.status === 1) {
        cancelled++;
        expect(ours).toBe(0);
        expect(status).toBe('cancelled');
        expect(states.every((s) => s === 'cancelled')).toBe(true);
        expect(await credits(h(), a)).toBe(100);
      } else {
        refused++;
        expect(outcome.body.status).toBe(-7);
        expect(ours).toBeGreaterThan(0);
        expect(status).toBe('scheduled');
        expect(states.filter((s) => s === 'cancelled')).toEqual([]);
        expect(states.filter((s) => s === 'sending')).toHaveLength(ours);
        expect(await credits(h(), a)).toBe(80);
      }
      await delivery.claim(10_000);
    }
    expect(cancelled + refused).toBe(12);
  });

  it('tolerates what real clients send on DELETE: an empty form body, [] or {}', async () => {
    const a = await h().account();
    for (const [body, contentType] of [
      ['', 'application/x-www-form-urlencoded'],
      ['[]', 'application/json'],
      ['{}', 'application/json'],
    ]) {
      const sent = await send(h(), a, 1, '2030-06-01 10:00:00');
      const r = await call(h().app, 'DELETE', `/send/${sent.ticket}`, { token: a.token, body, contentType });
      expect(r.body, `${contentType} ${body}`).toMatchObject({ status: 1, credits: 1000 });
    }
  });

  it('answers the same in JSON and XML', async () => {
    const a = await h().account({ credits: 30 });
    const first = await send(h(), a, 1, '2030-06-01 10:00:00');
    const second = await send(h(), a, 1, '2030-06-01 10:00:00');
    const j = await cancel(h(), a, first.ticket, 'application/json');
    const x = await cancel(h(), a, second.ticket, 'application/xml');
    expect(x.contentType).toContain('application/xml');
    expect(j.body).toEqual({ status: 1, message: 'OK', credits: 29 });
    expect(x.body).toEqual({ status: '1', message: 'OK', credits: '30' });
    const error = await cancel(h(), a, second.ticket, 'application/xml');
    expect(error.body).toEqual({
      status: '-7',
      message: 'Data error',
      details: `campaign ${second.ticket} is already cancelled`,
    });
  });
});
