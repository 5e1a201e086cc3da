import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import { bindPrepared, padToShape, slot } from './prepared.ts';
import type { Database } from './schema.ts';

const db = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new SqliteIntrospector(k),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

const as = (i: number) => slot(i) as unknown as number;

describe('prepared statements bind values exactly where the builder put them', () => {
  it('a bound statement equals the query compiled directly with the same values, call after call', () => {
    const build = (q: Kysely<Database>) =>
      q
        .updateTable('links')
        .set((eb) => ({ clicks: eb('clicks', '+', as(0)) }))
        .where('id', 'in', [as(2), as(1)]);
    for (const [by, a, b] of [
      [4, 10, 11],
      [7, 20, 21],
    ]) {
      const direct = db
        .updateTable('links')
        .set((eb) => ({ clicks: eb('clicks', '+', by) }))
        .where('id', 'in', [b, a])
        .compile();
      const bound = bindPrepared(db, 'test.update', build, [by, a, b]);
      expect(bound.sql).toBe(direct.sql);
      expect(bound.parameters).toEqual(direct.parameters);
    }
  });

  it('a slot used twice binds the same argument at both places', () => {
    const bound = bindPrepared(
      db,
      'test.twice',
      (q) =>
        q
          .selectFrom('links')
          .select('id')
          .where('account_id', '=', as(0))
          .union(q.selectFrom('clicks').select('id').where('account_id', '=', as(0))),
      [9],
    );
    expect(bound.parameters).toEqual([9, 9]);
  });

  it('refuses a builder whose values are not all slots, or that leaves an argument unbound', () => {
    expect(() =>
      bindPrepared(
        db,
        'test.literal',
        (q) =>
          q
            .selectFrom('links')
            .select('id')
            .where('id', 'in', [as(0), 5]),
        [1],
      ),
    ).toThrow(/every value must be a slot of its 1 arguments/);
    expect(() =>
      bindPrepared(
        db,
        'test.unbound',
        (q) => q.selectFrom('links').select('id').where('id', '=', as(0)),
        [1, 2],
      ),
    ).toThrow(/argument 1 is not bound/);
  });
});

describe('list lengths padded to a few statement shapes', () => {
  it('pads to the next power of two, at least the minimum, by repeating the last value', () => {
    const ids = [5, 6, 7];
    expect(padToShape(ids)).toBe(8);
    expect(ids).toEqual([5, 6, 7, 7, 7, 7, 7, 7]);
    const one = ['a'];
    expect(padToShape(one, 1)).toBe(1);
    expect(one).toEqual(['a']);
    const many = Array.from({ length: 129 }, (_, i) => i);
    expect(padToShape(many, 1)).toBe(256);
    expect(many).toHaveLength(256);
    expect(many.slice(129).every((v) => v === 128)).toBe(true);
    expect(new Set(many).size).toBe(129);
    const none: number[] = [];
    expect(padToShape(none)).toBe(0);
    expect(none).toEqual([]);
  });
});
