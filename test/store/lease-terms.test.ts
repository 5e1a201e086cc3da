// Leases held by a worker's term (store/lease-holder.ts) rather than row by row, on a manual clock: a row stays
// its worker's while the term is renewed, however long; it is released at the first sweep once the term lapsed
// or is gone; a term that missed its renewal is over for good; and a worker that lost a message records nothing
// of it.
import { expect, it } from 'vitest';
import { messagesRepo } from '../../src/delivery/messages.repo.ts';
import { createLeaseHolder } from '../../src/store/lease-holder.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

const leaseMs = 10_000;
const guardMs = 3_000;
let numberSeq = 0;

describeEachDialect('lease terms', (h) => {
  const db = () => h().deps.store.db;
  const holder = () =>
    createLeaseHolder({ db: db(), clock: h().clock, options: { queue: 'messages', leaseMs, guardMs } });

  /** A campaign of `size` messages due now, every other due message out of the way; answers its message ids. */
  async function queued(size: number): Promise<number[]> {
    const before = holder();
    await messagesRepo.claimDue(
      db(),
      h().deps.store.dialect,
      h().clock.now(),
      leaseMs,
      100_000,
      await before.term(),
    );
    const a = await h().account();
    const recipients = Array.from({ length: size }, () => ({
      value: `3366${String(1000000 + ++numberSeq)}`,
    }));
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'Terms', pushtype: 'alert' }, recipients: { gsm: recipients } } },
    });
    expect(r.body.status, r.body.details).toBe(1);
    const rows = await db()
      .selectFrom('messages')
      .select('id')
      .where('campaign_id', '=', Number(r.body.ticket))
      .execute();
    return rows.map((m) => m.id);
  }

  /** Claims due messages under `term`; answers those among `ids` (earlier tests' leftovers are taken too). */
  const claim = async (term: number, ids: number[]) =>
    (
      await messagesRepo.claimDue(db(), h().deps.store.dialect, h().clock.now(), leaseMs, 100_000, term)
    ).filter((m) => ids.includes(m.id));

  const rowsOf = (ids: number[]) =>
    db()
      .selectFrom('messages')
      .select(['id', 'state', 'lease_owner', 'smsc_id'])
      .where('id', 'in', ids)
      .orderBy('id')
      .execute();

  const sweep = () => messagesRepo.releaseExpiredLeases(db(), h().clock.now());

  it('a message leased under a term stays its worker’s while the term is renewed, far past one lease, and is released at the first sweep after it lapses', async () => {
    const ids = await queued(3);
    const worker = holder();
    const term = await worker.term();
    expect((await claim(term, ids)).map((m) => m.id).sort()).toEqual(ids.sort());
    // Four leases long, renewed as the heartbeat would (a claim renews once less than half is left).
    for (let i = 0; i < 20; i++) {
      h().clock.advance(2_000);
      expect(await worker.term()).toBe(term);
      expect(worker.holds(term)).toBe(true);
      await sweep();
    }
    expect((await rowsOf(ids)).every((m) => m.state === 'sending' && m.lease_owner === term)).toBe(true);

    // Renewals stop (the process died): one lease later, the next sweep gives every message back.
    h().clock.advance(leaseMs + 1);
    expect(await sweep()).toBeGreaterThanOrEqual(3);
    expect((await rowsOf(ids)).map((m) => [m.state, m.lease_owner])).toEqual([
      ['queued', null],
      ['queued', null],
      ['queued', null],
    ]);
  });

  it('a term that missed its renewal is over: its worker stops acting on it, its rows are free at once, and it is not revived', async () => {
    const ids = await queued(2);
    const worker = holder();
    const term = await worker.term();
    await claim(term, ids);
    // Past the guard but before the lease's end in the database: the worker must stop, others must be able to
    // take over (it gives its term up rather than wait for the database lease to run out).
    h().clock.advance(leaseMs - guardMs + 1);
    expect(worker.holds(term)).toBe(false);
    const other = holder();
    const otherTerm = await other.term();
    await expect
      .poll(async () => {
        await sweep();
        return (await claim(otherTerm, ids)).length;
      })
      .toBe(2);
    expect((await rowsOf(ids)).every((m) => m.lease_owner === otherTerm)).toBe(true);
    // The stalled worker comes back: a new term, never the old one again.
    const next = await worker.term();
    expect(next).not.toBe(term);
    expect(worker.holds(term)).toBe(false);
    expect(worker.holds(next)).toBe(true);
  });

  it('a claim that failed after leasing rows (its COMMIT’s answer lost) retires its term: renewed no more, its rows come back one lease later, what the worker holds is still its own until then', async () => {
    const ids = await queued(3);
    const [seen, ...unseen] = ids.sort((x, y) => x - y);
    const worker = holder();
    const held = await worker.leasing((term) => claim(term, [seen]));
    const term = held[0].lease_owner!;
    // The next claim leases the rest, then its connection is cut before the answer.
    await expect(
      worker.leasing(async (t) => {
        expect(t).toBe(term);
        await claim(t, unseen);
        throw new Error('Connection terminated unexpectedly');
      }),
    ).rejects.toThrow('Connection terminated');
    expect((await rowsOf(ids)).every((m) => m.state === 'sending' && m.lease_owner === term)).toBe(true);

    // The worker goes on under a new term, heartbeat and all; the message it had in hand is still its to send.
    const next = await worker.term();
    expect(next).not.toBe(term);
    expect(worker.holds(term)).toBe(true);
    for (let i = 0; i < 5; i++) {
      h().clock.advance(2_000);
      expect(await worker.term()).toBe(next);
      await sweep();
    }
    // One lease after its last renewal the old term is over: here, and in the database, where the sweep gives
    // its rows back (before the fix they stayed leased under a term renewed for ever).
    expect(worker.holds(term)).toBe(false);
    h().clock.advance(1);
    await sweep();
    expect((await rowsOf(ids)).map((m) => [m.state, m.lease_owner])).toEqual([
      ['queued', null],
      ['queued', null],
      ['queued', null],
    ]);
    expect(worker.holds(next)).toBe(true);
  });

  it('a worker that lost a message to another records nothing of it: not submitted, not queued again, no part', async () => {
    const ids = await queued(2);
    const stalled = holder();
    const lostTerm = await stalled.term();
    const claimed = await claim(lostTerm, ids);
    h().clock.advance(leaseMs + 1);
    await sweep();
    const live = holder();
    const liveTerm = await live.term();
    expect(await claim(liveTerm, ids)).toHaveLength(2);

    // The stalled worker's outcomes land late: one submitted, one to retry.
    const [first, second] = claimed.sort((x, y) => x.id - y.id);
    await h().deps.services.delivery.recordOutcomes(
      [
        { kind: 'submitted', message: first, smscIds: ['lost-1'] },
        { kind: 'retry', message: second, retryAt: h().clock.now(), error: 'throttled' },
      ],
      [],
    );
    expect(await rowsOf(ids)).toEqual([
      { id: first.id, state: 'sending', lease_owner: liveTerm, smsc_id: null },
      { id: second.id, state: 'sending', lease_owner: liveTerm, smsc_id: null },
    ]);
    const parts = await db()
      .selectFrom('message_parts')
      .select('id')
      .where('message_id', 'in', ids)
      .execute();
    expect(parts).toEqual([]);

    // The live worker's record lands.
    const mine = (await rowsOf(ids)).map((m) => ({ ...first, id: m.id, lease_owner: liveTerm }));
    await h().deps.services.delivery.recordOutcomes(
      mine.map((message, i) => ({ kind: 'submitted', message, smscIds: [`live-${i}`] })),
      [],
    );
    expect((await rowsOf(ids)).map((m) => [m.state, m.lease_owner, m.smsc_id])).toEqual([
      ['submitted', null, 'live-0'],
      ['submitted', null, 'live-1'],
    ]);
  });

  it('a term whose row is gone counts as lapsed, and a message leased without a term is released when its own lease ends', async () => {
    const ids = await queued(2);
    const [termed, untermed] = ids.sort((x, y) => x - y);
    const now = h().clock.now();
    await db()
      .updateTable('messages')
      .set({ state: 'sending', lease_owner: 999_999_999, lease_until: now + leaseMs })
      .where('id', '=', termed)
      .execute();
    // As a worker of the previous version leased it: no term, a row lease.
    await db()
      .updateTable('messages')
      .set({ state: 'sending', lease_owner: null, lease_until: now + leaseMs })
      .where('id', '=', untermed)
      .execute();
    await sweep();
    expect((await rowsOf(ids)).map((m) => m.state)).toEqual(['queued', 'sending']);
    h().clock.advance(leaseMs + 1);
    await sweep();
    expect((await rowsOf(ids)).map((m) => m.state)).toEqual(['queued', 'queued']);
  });
  it('after the clock went back, the next claim anchors the term to it again: its rows are still released one lease after it stops', async () => {
    const ids = await queued(1);
    const worker = holder();
    const now = h().clock.now();
    h().clock.set(now + 365 * 86_400_000);
    const term = await worker.term();
    h().clock.set(now);
    expect(await worker.term()).toBe(term);
    expect(await claim(term, ids)).toHaveLength(1);
    h().clock.advance(leaseMs + 1);
    await sweep();
    expect((await rowsOf(ids)).map((m) => m.state)).toEqual(['queued']);
  });
});
