// `pigeon move`: everything of a SQLite database copied into a PostgreSQL one, for the user who outgrows the
// embedded default. The source is read from one snapshot (one SQLite transaction, which also holds the file's
// write lock, so a server left running cannot acknowledge a write the copy would miss); the target is migrated
// first, must hold no Pigeon data, and receives every table in one transaction: a failure leaves it as empty
// as it was. Tables are read a keyset page at a time, so a million messages are never held at once.
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { insertRows } from './bulk-insert.ts';
import { type Executor, isPostgresUrl, openStore, type Store, sqlitePath } from './db.ts';
import { migrate } from './migrate.ts';
import { type CheckLine, checkMove } from './move-check.ts';
import { type Database, tableNames } from './schema.ts';

export class MoveRefused extends Error {}

export interface MoveOptions {
  /** Rows read from SQLite per page (each page is inserted before the next is read). */
  pageRows?: number;
  /** Now, in milliseconds: a worker's lease term still running then means the server is. */
  now?: () => number;
  /** Each check's line, as it is made. */
  report: (line: MoveLine) => void;
}

export type MoveLine =
  | CheckLine
  | { moved: boolean; from: string; to: string; tables: number; rows: number; ok: boolean };

type Table = keyof Database;
type SqliteValue = number | bigint | string | Buffer | null;

/** How long the move waits for a running server's write to finish before it gives up on the lock. */
const lockWaitMs = 10_000;

/** Copies the SQLite database at `sourceUrl` into the empty PostgreSQL database at `targetUrl`, then checks it. */
export async function moveToPostgres(
  sourceUrl: string,
  targetUrl: string,
  options: MoveOptions,
): Promise<boolean> {
  if (isPostgresUrl(sourceUrl))
    throw new MoveRefused(
      'DATABASE_URL is already PostgreSQL: move copies a SQLite database into PostgreSQL',
    );
  if (!isPostgresUrl(targetUrl))
    throw new MoveRefused('--to must be a PostgreSQL URL: postgres://user@host:5432/database[?schema=name]');
  const path = sqlitePath(sourceUrl);
  if (path === ':memory:') throw new MoveRefused('DATABASE_URL is :memory:, which no other process can read');
  if (!existsSync(path))
    throw new MoveRefused(`no SQLite database at ${path} (DATABASE_URL): nothing to move`);
  // The source is brought to this version's schema first, as any command would: both sides then have the same
  // tables and columns.
  const sourceStore = await openStore(sourceUrl);
  try {
    await migrate(sourceStore);
  } finally {
    await sourceStore.destroy();
  }
  const target = await openTarget(targetUrl);
  const source = new BetterSqlite3(path, { fileMustExist: true, timeout: lockWaitMs });
  try {
    // The write lock, taken before the first read: the snapshot read below is the database's last state.
    source.exec('begin immediate');
    refuseWhileServing(source, options.now?.() ?? Date.now());
    const seeded = await migrationRows();
    await refuseUnlessEmpty(target, seeded);
    await migrate(target);
    const order = copyOrder(source);
    let rows = 0;
    await target.db.transaction().execute(async (tx) => {
      await refuseUnlessEmpty({ ...target, db: tx }, seeded);
      // The migrations' own rows give way to the source's (its cursors where it had got to).
      for (const table of seeded.keys()) await sql`delete from ${sql.table(table)}`.execute(tx);
      for (const table of order) rows += await copyTable(source, tx, target.schema!, table, options.pageRows);
      await setSequences(source, tx, target.schema!, order);
    });
    const ok = await checkMove(source, target.db, options.report);
    options.report({ moved: true, from: path, to: redact(targetUrl), tables: order.length, rows, ok });
    return ok;
  } finally {
    if (source.inTransaction) source.exec('rollback');
    source.close();
    await target.destroy();
  }
}

/** The target, answering: a server that cannot be reached is named, without its password. */
async function openTarget(url: string): Promise<Store> {
  let store: Store | undefined;
  try {
    store = await openStore(url);
    await sql`select 1`.execute(store.db);
    return store;
  } catch (error) {
    await store?.destroy();
    throw new MoveRefused(`cannot reach the target database ${redact(url)}: ${(error as Error).message}`);
  }
}

/** A worker's lease term still running means a delivery or webhooks process serves this database now. */
function refuseWhileServing(source: BetterSqlite3.Database, now: number): void {
  const live = source
    .prepare(
      'select queue, host, pid, lease_until from lease_holders where lease_until > ? order by id limit 1',
    )
    .get(now) as { queue: string; host: string; pid: number; lease_until: number } | undefined;
  if (live === undefined) return;
  throw new MoveRefused(
    `a Pigeon process still serves this database (the ${live.queue} worker of ${live.host}, pid ${live.pid}, ` +
      `holds leases until ${new Date(live.lease_until).toISOString()}): stop the server, then move; ` +
      'a process that was killed lets its term lapse within LEASE_SECONDS',
  );
}

/**
 * The rows a migration writes into an empty database (a cursor at its start): a target holding only these is
 * empty of Pigeon data. Found by migrating an empty database in memory, so a later migration's rows count too.
 */
async function migrationRows(): Promise<Map<string, number>> {
  const fresh = await openStore(':memory:');
  try {
    await migrate(fresh);
    const counts = new Map<string, number>();
    for (const table of tableNames) {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(
        fresh.db,
      );
      if (Number(rows[0].n) > 0) counts.set(table, Number(rows[0].n));
    }
    return counts;
  } finally {
    await fresh.destroy();
  }
}

/** Refuses a target holding any row of a Pigeon table beyond the migrations' own: a move never mixes two databases. */
async function refuseUnlessEmpty(
  target: Pick<Store, 'db' | 'schema'>,
  seeded: Map<string, number>,
): Promise<void> {
  const present = await sql<{ table_name: string }>`
    select table_name from information_schema.tables
    where table_schema = ${target.schema} and table_name in (${sql.join(tableNames)})
    order by table_name`.execute(target.db);
  const holding: string[] = [];
  for (const { table_name } of present.rows) {
    const { rows } = await sql<{ n: number }>`
      select count(*) as n from (select 1 from ${sql.table(table_name)} limit ${seeded.get(table_name) ?? 0} + 1) t`.execute(
      target.db,
    );
    if (Number(rows[0].n) > (seeded.get(table_name) ?? 0)) holding.push(table_name);
  }
  if (holding.length > 0) {
    throw new MoveRefused(
      `the target schema "${target.schema}" already holds Pigeon data (${holding.join(', ')}): nothing was ` +
        'written; move into an empty database, or name a new schema with ?schema=',
    );
  }
}

/**
 * Every table of the schema, each after the tables its foreign keys point to (SQLite's own record of them):
 * a row is inserted after the rows it refers to. A table's reference to itself (a sub-account's parent) is
 * met by copying in rowid order, the order the rows were written in.
 */
export function copyOrder(source: BetterSqlite3.Database): Table[] {
  const existing = new Set(
    (source.prepare(`select name from sqlite_master where type = 'table'`).all() as { name: string }[]).map(
      (r) => r.name,
    ),
  );
  const missing = tableNames.filter((t) => !existing.has(t));
  if (missing.length > 0) throw new MoveRefused(`the source database has no table ${missing.join(', ')}`);
  const refersTo = new Map<Table, Set<string>>();
  for (const table of tableNames) {
    const keys = source.prepare(`select "table" from pragma_foreign_key_list(?)`).all(table) as {
      table: string;
    }[];
    refersTo.set(table, new Set(keys.map((k) => k.table).filter((t) => t !== table)));
  }
  const order: Table[] = [];
  const placed = new Set<string>();
  while (order.length < tableNames.length) {
    const next = tableNames.filter(
      (t) => !placed.has(t) && [...refersTo.get(t)!].every((r) => placed.has(r)),
    );
    if (next.length === 0) throw new Error('the foreign keys of the schema form a cycle');
    for (const t of next) {
      order.push(t);
      placed.add(t);
    }
  }
  return order;
}

/** The table's columns, as SQLite has them, and PostgreSQL's type of each. */
async function columnsOf(
  source: BetterSqlite3.Database,
  tx: Executor,
  schema: string,
  table: Table,
): Promise<{ names: string[]; types: string[] }> {
  const names = (
    source.prepare('select name from pragma_table_info(?) order by cid').all(table) as { name: string }[]
  ).map((c) => c.name);
  const { rows } = await sql<{ column_name: string; data_type: string }>`
    select column_name, data_type from information_schema.columns
    where table_schema = ${schema} and table_name = ${table}`.execute(tx);
  const typeOf = new Map(rows.map((r) => [r.column_name, r.data_type]));
  const unknown = names.filter((n) => !typeOf.has(n));
  if (unknown.length > 0 || rows.length !== names.length) {
    throw new Error(`${table}: the columns differ between SQLite and PostgreSQL (${unknown.join(', ')})`);
  }
  return { names, types: names.map((n) => typeOf.get(n)!) };
}

/** A SQLite value as PostgreSQL's column type takes it. Integers come exact (as bigint) and go as text. */
function converter(type: string): (value: SqliteValue) => unknown {
  if (type === 'boolean') return (v) => (v === null ? null : Number(v) !== 0);
  if (type === 'bytea') return (v) => (v === null || Buffer.isBuffer(v) ? v : Buffer.from(String(v)));
  if (type.startsWith('timestamp'))
    return (v) => (typeof v === 'number' || typeof v === 'bigint' ? new Date(Number(v)) : v);
  if (type === 'text' || type === 'character varying')
    return (v) => (Buffer.isBuffer(v) ? v.toString('utf8') : typeof v === 'bigint' ? String(v) : v);
  return (v) => (typeof v === 'bigint' ? String(v) : v);
}

/** Copies one table a keyset page (by rowid) at a time; answers the rows copied. */
async function copyTable(
  source: BetterSqlite3.Database,
  tx: Executor,
  schema: string,
  table: Table,
  pageRows = 2000,
): Promise<number> {
  const { names, types } = await columnsOf(source, tx, schema, table);
  const convert = types.map(converter);
  const list = names.map((n) => `"${n}"`).join(', ');
  const page = source
    .prepare(`select rowid, ${list} from "${table}" where rowid > ? order by rowid limit ?`)
    .raw(true)
    .safeIntegers(true);
  // PostgreSQL binds at most 65,535 parameters per statement.
  const batchRows = Math.max(1, Math.min(500, Math.floor(30_000 / names.length)));
  let after = -(2n ** 63n);
  let copied = 0;
  for (;;) {
    const rows = page.all(after, pageRows) as SqliteValue[][];
    if (rows.length === 0) return copied;
    after = rows[rows.length - 1][0] as bigint;
    const values = rows.map((row) => names.map((_, c) => convert[c](row[c + 1])));
    await insertRows(tx, table, names as never, values, batchRows);
    copied += rows.length;
  }
}

/**
 * Sets each id sequence past the highest id SQLite gave: its AUTOINCREMENT counter, which also counts rows
 * deleted since (an id is never given twice, so a cursor over an append-only table never skips a new row).
 */
async function setSequences(source: BetterSqlite3.Database, tx: Executor, schema: string, order: Table[]) {
  const counters = new Map(
    (source.prepare('select name, seq from sqlite_sequence').all() as { name: string; seq: number }[]).map(
      (r) => [r.name, r.seq],
    ),
  );
  for (const table of order) {
    // Asked only of a table with an id column: an error would end the transaction.
    if (source.prepare(`select 1 from pragma_table_info(?) where name = 'id'`).get(table) === undefined)
      continue;
    const { rows } = await sql<{ sequence: string | null }>`
      select pg_get_serial_sequence(${`"${schema}"."${table}"`}, 'id') as sequence`.execute(tx);
    const sequence = rows[0]?.sequence;
    if (!sequence) continue;
    const max = source.prepare(`select max(id) as max from "${table}"`).get() as { max: number | null };
    const highest = Math.max(max.max ?? 0, counters.get(table) ?? 0);
    if (highest > 0) await sql`select setval(${sequence}::regclass, ${highest}, true)`.execute(tx);
  }
}

/** The URL without its password, to print. */
export function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
