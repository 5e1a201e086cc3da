import { expect, it } from 'vitest';
import { createSendBatcher } from '../../src/campaigns/send-batcher.ts';
import type { Executor } from '../../src/store/db.ts';
import { describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('send batcher', (h) => {
  const insertList = (tx: Executor, accountId: number, name: string) =>
    tx.insertInto('lists').values({ account_id: accountId, name, created_at: 0 }).execute();
  const listNames = async (accountId: number) =>
    (
      await h()
        .deps.store.db.selectFrom('lists')
        .select('name')
        .where('account_id', '=', accountId)
        .orderBy('id')
        .execute()
    ).map((n) => n.name);

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
    expect(await listNames(a.id)).toEqual(['one', 'three']);
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
    expect(await listNames(a.id)).toEqual([]);
  });

  it('a group whose statement fails is told and written again one by one, nothing lost', async () => {
    const a = await h().account();
    const db = h().deps.store.db;
    const failures: unknown[] = [];
    const batcher = createSendBatcher<string>(db, {
      writeTogether: async (tx, names) => {
        await insertList(tx, a.id, `together ${names.join(',')}`);
        throw new Error('syntax error at or near ")"');
      },
      failedTogether: (error) => failures.push(error),
    });
    const alone = (name: string) => async (tx: Executor) => {
      await insertList(tx, a.id, name);
      return name;
    };
    const values = await Promise.all([
      batcher.submit(alone('one'), 'one'),
      batcher.submit(alone('two'), 'two'),
    ]);
    expect(values).toEqual(['one', 'two']);
    expect(failures.map((e) => (e as Error).message)).toEqual(['syntax error at or near ")"']);
    expect(await listNames(a.id)).toEqual(['one', 'two']);
  });
});
