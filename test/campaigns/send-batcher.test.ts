import { expect, it } from 'vitest';
import { createSendBatcher } from '../../src/campaigns/send-batcher.ts';
import type { Executor } from '../../src/store/db.ts';
import { describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('send batcher', (h) => {
  const insertList = (tx: Executor, accountId: number, name: string) =>
    tx.insertInto('lists').values({ account_id: accountId, name, created_at: 0 }).execute();

  it('sends submitted together share one transaction; a failing one is rolled back alone', async () => {
    const a = await h().account();
    const db = h().deps.store.db;
    const batcher = createSendBatcher(db);
    const seen: Executor[] = [];
    const job = (name: string, fail: boolean) => async (tx: Executor) => {
      seen.push(tx);
      await insertList(tx, a.id, name);
      if (fail) throw new Error(`${name} failed`);
      return name;
    };
    const outcomes = await Promise.allSettled([
      batcher.submit(job('one', false)),
      batcher.submit(job('two', true)),
      batcher.submit(job('three', false)),
    ]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      'one',
      'two failed',
      'three',
    ]);
    expect(new Set(seen).size).toBe(1);
    const names = await db
      .selectFrom('lists')
      .select('name')
      .where('account_id', '=', a.id)
      .orderBy('id')
      .execute();
    expect(names.map((n) => n.name)).toEqual(['one', 'three']);
  });

  it('a send alone is its own transaction and its failure stores nothing', async () => {
    const a = await h().account();
    const db = h().deps.store.db;
    const batcher = createSendBatcher(db);
    await expect(
      batcher.submit(async (tx) => {
        await insertList(tx, a.id, 'alone');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await db.selectFrom('lists').select('name').where('account_id', '=', a.id).execute()).toEqual([]);
  });
});
