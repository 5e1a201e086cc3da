import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows } from './bulk-insert.ts';
import { openStore, type Store } from './db.ts';
import { migrate } from './migrate.ts';

describe('insertRows: full batches, then the rest in powers of two', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore(':memory:');
    await migrate(store);
  });
  afterAll(() => store.destroy());

  it('writes every row once, in order, whatever the count', async () => {
    for (const count of [0, 1, 7, 50, 77, 130]) {
      await store.db.deleteFrom('cursors').execute();
      const rows = Array.from({ length: count }, (_, i) => [`c${count}-${i}`, i]);
      await insertRows(store.db, 'cursors', ['name', 'position'], rows, 50);
      const written = await store.db
        .selectFrom('cursors')
        .select(['name', 'position'])
        .orderBy('rowid' as never)
        .execute();
      expect(written.map((r) => [r.name, Number(r.position)])).toEqual(rows);
    }
  });
});
