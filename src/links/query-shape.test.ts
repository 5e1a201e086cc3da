import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../store/schema.ts';
import { bindShape, compileShape } from './query-shape.ts';

const db = new Kysely<Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new SqliteIntrospector(k),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

describe('query shapes bind values exactly where the builder put them', () => {
  it('a bound shape equals the query compiled directly with the same values', () => {
    const shape = compileShape(3, (input) =>
      db
        .updateTable('links')
        .set((eb) => ({ clicks: eb('clicks', '+', input(0)) }))
        .where('id', 'in', [input(1), input(2)]),
    );
    const direct = db
      .updateTable('links')
      .set((eb) => ({ clicks: eb('clicks', '+', 4) }))
      .where('id', 'in', [10, 11])
      .compile();
    const bound = bindShape(shape, [4, 10, 11]);
    expect(bound.sql).toBe(direct.sql);
    expect(bound.parameters).toEqual(direct.parameters);
  });

  it('refuses a builder whose parameters are not exactly its inputs', () => {
    expect(() =>
      compileShape(2, (input) => db.selectFrom('links').select('id').where('id', '=', input(0))),
    ).toThrow(/1 inputs were not bound/);
    expect(() =>
      compileShape(1, (input) =>
        db
          .selectFrom('links')
          .select('id')
          .where('id', 'in', [input(0), 5]),
      ),
    ).toThrow(/not one of its 1 inputs/);
  });
});
