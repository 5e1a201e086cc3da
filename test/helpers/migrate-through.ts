// An empty database brought to an older schema, for tests of what a later migration does to old data.
import { type Migration, Migrator } from 'kysely';
import type { Store } from '../../src/store/db.ts';
import { migrations } from '../../src/store/migrate.ts';

/** Brings an empty database to the schema of the given migration, as the version that ended there did. */
export async function migrateThrough(store: Store, last: keyof typeof migrations): Promise<void> {
  const postgres = store.dialect === 'postgres';
  const older: Record<string, Migration> = {};
  for (const [name, m] of Object.entries(migrations)) {
    if (name > last) break;
    older[name] = { up: (db) => m.up(db, postgres) };
  }
  const { error } = await new Migrator({
    db: store.db,
    provider: { getMigrations: async () => older },
    migrationTableSchema: store.schema,
  }).migrateToLatest();
  if (error) throw error;
}
