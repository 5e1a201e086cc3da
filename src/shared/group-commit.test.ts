import { afterEach, describe, expect, it, vi } from 'vitest';
import { GroupCommit } from './group-commit.ts';

describe('group commit writes items of one event-loop turn together', () => {
  it('items added in the same turn are written by one call, and each caller learns it was written', async () => {
    const writes: number[][] = [];
    const group = new GroupCommit<number>(
      async (items) => {
        writes.push([...items]);
      },
      () => {},
      { maxItems: 100 },
    );
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => group.add(n)));
    expect(results).toEqual([true, true, true, true, true]);
    expect(writes).toEqual([[1, 2, 3, 4, 5]]);
  });

  it('nothing settles before its write has finished', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let settled = false;
    const group = new GroupCommit<number>(
      () => gate,
      () => {},
      { maxItems: 100 },
    );
    const pending = group.add(1).then(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    release();
    await pending;
    expect(settled).toBe(true);
  });

  it('items arriving during a write go into the next batch, and a batch never exceeds its bound', async () => {
    const writes: number[][] = [];
    let release!: () => void;
    const firstGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const group = new GroupCommit<number>(
      async (items) => {
        writes.push([...items]);
        if (writes.length === 1) await firstGate;
      },
      () => {},
      { maxItems: 3 },
    );
    const first = group.add(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([[0]]);
    const later = [1, 2, 3, 4, 5, 6, 7].map((n) => group.add(n));
    expect(group.pending).toBe(8);
    release();
    await Promise.all([first, ...later]);
    expect(writes).toEqual([[0], [1, 2, 3], [4, 5, 6], [7]]);
    expect(group.pending).toBe(0);
  });

  it('a failed write is reported once for its batch, its callers get false, and later batches still run', async () => {
    const errors: [unknown, number][] = [];
    let fail = true;
    const group = new GroupCommit<number>(
      async () => {
        if (fail) throw new Error('disk full');
      },
      (error, items) => errors.push([error, items.length]),
      { maxItems: 100 },
    );
    const failed = await Promise.all([group.add(1), group.add(2)]);
    expect(failed).toEqual([false, false]);
    expect(errors).toHaveLength(1);
    expect((errors[0][0] as Error).message).toBe('disk full');
    expect(errors[0][1]).toBe(2);
    fail = false;
    expect(await group.add(3)).toBe(true);
  });

  it('drain waits for everything added so far', async () => {
    const written: number[] = [];
    const group = new GroupCommit<number>(
      async (items) => {
        // A write that spans event-loop turns, as a PostgreSQL round trip does.
        await new Promise((resolve) => setImmediate(resolve));
        written.push(...items);
      },
      () => {},
      { maxItems: 2 },
    );
    for (const n of [1, 2, 3, 4, 5]) void group.add(n);
    await group.drain();
    expect(written).toEqual([1, 2, 3, 4, 5]);
    await group.drain();
  });
});

describe('with delayMs, a batch started at rest waits that long for company', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  afterEach(() => {
    vi.useRealTimers();
  });

  it('items added in different turns within the delay are written by one call', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const writes: number[][] = [];
    const group = new GroupCommit<number>(
      async (items) => {
        writes.push([...items]);
      },
      () => {},
      { maxItems: 100, delayMs: 10 },
    );
    const first = group.add(1);
    await nextTurn();
    const second = group.add(2);
    await nextTurn();
    expect(writes).toEqual([]);
    expect(group.pending).toBe(2);
    vi.advanceTimersByTime(10);
    expect(await Promise.all([first, second])).toEqual([true, true]);
    expect(writes).toEqual([[1, 2]]);
  });

  it('a batch that fills up is written at once, and items during its write go into the next batch', async () => {
    const writes: number[][] = [];
    const group = new GroupCommit<number>(
      async (items) => {
        writes.push([...items]);
        await nextTurn();
      },
      () => {},
      { maxItems: 3, delayMs: 3_600_000 },
    );
    const full = [1, 2, 3].map((n) => group.add(n));
    expect(writes).toEqual([[1, 2, 3]]);
    const next = group.add(4);
    expect(await Promise.all([...full, next])).toEqual([true, true, true, true]);
    expect(writes).toEqual([[1, 2, 3], [4]]);
  });

  it('drain cuts the wait short and writes what was added', async () => {
    const writes: number[][] = [];
    const group = new GroupCommit<number>(
      async (items) => {
        writes.push([...items]);
      },
      () => {},
      { maxItems: 100, delayMs: 3_600_000 },
    );
    void group.add(1);
    await nextTurn();
    void group.add(2);
    await group.drain();
    expect(writes).toEqual([[1, 2]]);
    expect(group.pending).toBe(0);
  });
});
