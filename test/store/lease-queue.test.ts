import { expect, it } from 'vitest';
import { leaseQueue } from '../../src/store/lease-queue.ts';
import { describeEachDialect } from '../helpers/harness.ts';

const spec = {
  table: 'alert_jobs',
  waiting: 'pending',
  leased: 'sending',
  dueColumn: 'next_attempt_at',
} as const;
const counting = leaseQueue({ ...spec, leaseCountsAttempt: true });
const notCounting = leaseQueue({ ...spec, leaseCountsAttempt: false });

describeEachDialect('lease queue', (h) => {
  async function jobs(accountId: number, dueTimes: number[], state = 'pending'): Promise<number[]> {
    const rows = await h()
      .deps.store.db.insertInto('alert_jobs')
      .values(
        dueTimes.map((due) => ({
          account_id: accountId,
          kind: 'email',
          recipient: 'x@example.com',
          payload: '{}',
          state,
          attempts: 0,
          next_attempt_at: due,
          lease_until: null,
          last_error: null,
          created_at: 0,
          updated_at: 0,
        })),
      )
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  }

  const stateOf = (ids: number[]) =>
    h()
      .deps.store.db.selectFrom('alert_jobs')
      .select(['id', 'state', 'attempts', 'lease_until'])
      .where('id', 'in', ids)
      .orderBy('id')
      .execute();

  it('a claim leases due waiting rows oldest due first, counts the attempt, and a row whose lease expired waits again', async () => {
    const { store } = h().deps;
    const a = await h().account();
    const [late, early, middle, future] = await jobs(a.id, [-30, -50, -40, 1_000_000]);
    const [done] = await jobs(a.id, [-60], 'sent');
    const now = 0;
    const first = await counting.claimDue(store.db, store.dialect, { now, leaseUntil: 100, limit: 2 }, [
      'id',
      'attempts',
    ]);
    expect(first.map((r) => r.id).sort((x, y) => x - y)).toEqual([early, middle].sort((x, y) => x - y));
    expect(first.every((r) => r.attempts === 1)).toBe(true);
    const second = await counting.claimDue(store.db, store.dialect, { now, leaseUntil: 200, limit: 5 }, [
      'id',
    ]);
    expect(second.map((r) => r.id)).toEqual([late]);

    expect(await counting.releaseExpired(store.db, 100)).toBe(0);
    expect(await counting.releaseExpired(store.db, 150)).toBe(2);
    expect(await stateOf([late, early, middle, future, done])).toEqual([
      { id: late, state: 'sending', attempts: 1, lease_until: 200 },
      { id: early, state: 'pending', attempts: 1, lease_until: null },
      { id: middle, state: 'pending', attempts: 1, lease_until: null },
      { id: future, state: 'pending', attempts: 0, lease_until: null },
      { id: done, state: 'sent', attempts: 0, lease_until: null },
    ]);
  });

  it('due rows can leave some out and be leased after the caller picks; a lease that does not count attempts', async () => {
    const { store } = h().deps;
    const a = await h().account();
    const b = await h().account();
    const [ofA] = await jobs(a.id, [-10]);
    const [ofB] = await jobs(b.id, [-20]);
    const due = (except: number[]) =>
      store.db.transaction().execute((tx) =>
        notCounting.due(tx, store.dialect, { now: 0, limit: 100 }, ['id', 'account_id'], {
          column: 'account_id',
          values: except,
        }),
      );
    const mine = (rows: { id: number }[]) => rows.filter((r) => r.id === ofA || r.id === ofB);
    expect(mine(await due([]))).toEqual([
      { id: ofB, account_id: b.id },
      { id: ofA, account_id: a.id },
    ]);
    expect(mine(await due([b.id]))).toEqual([{ id: ofA, account_id: a.id }]);

    const leased = await notCounting.lease(store.db, [ofA], { now: 0, leaseUntil: 50 }, ['id', 'attempts']);
    expect(leased).toEqual([{ id: ofA, attempts: 0 }]);
    // Leased already: not waiting any more, so not leased again.
    expect(await notCounting.lease(store.db, [ofA, ofB], { now: 0, leaseUntil: 60 }, ['id'])).toEqual([
      { id: ofB },
    ]);
  });
});
