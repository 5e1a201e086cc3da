// Pigeon's migrator reads the catalog of its own schema only: on a shared PostgreSQL database, tables of
// another schema, even one being altered meanwhile, neither show up nor make the read fail (Kysely's own
// introspector asked for each table's sequence by name, and failed when one was renamed under it).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';

describe.skipIf(!inject('pgUrl'))('introspection of one schema [postgres]', () => {
  let mine: Harness;
  let other: Harness;
  let store: Store;
  beforeAll(async () => {
    [mine, other] = await Promise.all([createHarness('postgres'), createHarness('postgres')]);
    store = await openStore(mine.databaseUrl);
  });
  afterAll(async () => {
    await store?.destroy();
    await Promise.all([mine?.close(), other?.close()]);
  });

  it("lists the tables of Pigeon's schema and none of another's", async () => {
    const tables = await store.db.introspection.getTables({ withInternalKyselyTables: true });
    const schemaOf = (url: string) => new URL(url).searchParams.get('schema');
    expect(new Set(tables.map((t) => t.schema))).toEqual(new Set([schemaOf(mine.databaseUrl)]));
    const names = tables.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['accounts', 'messages', 'kysely_migration']));
    const messages = tables.find((t) => t.name === 'messages');
    expect(messages?.columns.find((c) => c.name === 'id')).toMatchObject({
      isAutoIncrementing: true,
      isNullable: false,
    });
    expect(await store.db.introspection.getTables()).not.toContainEqual(
      expect.objectContaining({ name: 'kysely_migration' }),
    );
    expect(await store.db.introspection.getSchemas()).toEqual([{ name: schemaOf(mine.databaseUrl) }]);
  });

  it("migrates while another schema's tables are renamed back and forth", async () => {
    const otherSchema = new URL(other.databaseUrl).searchParams.get('schema');
    const client = new pg.Client({ connectionString: inject('pgUrl') });
    await client.connect();
    let renames = 0;
    let stop = false;
    const renaming = (async () => {
      while (!stop && renames < 2000) {
        await client.query(`alter table ${otherSchema}.events rename to events_away`);
        await client.query(`alter table ${otherSchema}.events_away rename to events`);
        renames++;
      }
    })();
    try {
      for (let i = 0; i < 30; i++) expect(await migrate(store)).toEqual([]);
    } finally {
      stop = true;
      await renaming;
      await client.end();
    }
    expect(renames).toBeGreaterThan(0);
  });
});
