// Two processes write one SQLite file: a statement that finds the write lock taken waits for it without
// stopping its event loop, and runs once the lock is free.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

describe('SQLite write lock held by another connection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-lock-'));
  const file = join(dir, 'pigeon.db');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a write waits for the lock with its event loop running, and is stored once the other commits', async () => {
    const store = await openStore(file);
    await migrate(store);
    const other = new BetterSqlite3(file);
    other.exec('begin immediate');
    let turns = 0;
    const ticker = setInterval(() => turns++, 1);
    const write =
      sql`insert into orphan_receipts (smsc_id, stat, received_at) values ('x', 'DELIVRD', 1)`.execute(
        store.db,
      );
    let written = false;
    void write.then(() => {
      written = true;
    });
    // The lock is held: the write waits, and timers keep firing meanwhile.
    const heldUntil = Date.now() + 50;
    while (Date.now() < heldUntil) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(written).toBe(false);
    expect(turns).toBeGreaterThan(5);
    other.exec('commit');
    await write;
    clearInterval(ticker);
    const rows = await sql<{ n: number }>`select count(*) as n from orphan_receipts`.execute(store.db);
    expect(rows.rows[0].n).toBe(1);
    other.close();
    await store.destroy();
  });
});
