import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { preparedName } from './prepared.ts';
import type { Database } from './schema.ts';
import { SchemaPostgresDialect } from './schema-introspector.ts';
import { CachedSqliteDialect } from './sqlite-driver.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** A query executor: the database itself or an open transaction. Repositories take either. */
export type Executor = Kysely<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Store {
  db: Db;
  dialect: DialectName;
  /** PostgreSQL schema holding Pigeon's tables. */
  schema?: string;
  /** PostgreSQL: the server and database, without `?schema=`, for a connection outside the pool (LISTEN). */
  connectionString?: string;
  /** Runs `fn` holding the database-wide migration lock (PostgreSQL; SQLite needs none). */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>;
  /** The connection pool's use now, for metrics: SQLite has one connection, always open. */
  connections(): PoolUse;
  /**
   * After an erasure: SQLite copies its WAL into the database file and truncates it to nothing, so no earlier
   * version of an erased row stays readable in the log (deleted content in the file is zeroed as it is deleted:
   * `secure_delete`). Answers whether the log was emptied (other processes reading at that moment can keep it,
   * for at most `logTruncateWaitMs`). PostgreSQL: nothing to do here (docs/operations.md says what remains).
   */
  truncateLog(): Promise<boolean>;
  destroy(): Promise<void>;
}

export interface PoolUse {
  max: number;
  open: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

export interface StoreOptions {
  sqliteSynchronous?: 'NORMAL' | 'FULL';
  pgPoolSize?: number;
  /** How long a query waits for a connection (a free one of the pool, or a new one opened): 5 s by default. */
  pgConnectTimeoutMs?: number;
  /** How long a query waits for its answer once sent, before it fails: 30 s by default. */
  pgQueryTimeoutMs?: number;
}

/**
 * The bounds of a PostgreSQL query when the server does not answer: a request, a worker's write or a heartbeat
 * fails within them (and is answered, retried or reported) instead of hanging.
 */
export const pgDefaultTimeouts = { connectMs: 5_000, queryMs: 30_000 } as const;

// PostgreSQL sends int8 (our ids, times and counts) as strings; they all fit in a double.
pg.types.setTypeParser(20, (value) => Number(value));

/** The advisory lock key under which schemas are migrated (and, in tests, dropped). */
export const migrationLockKey = 7467;

/**
 * Holds the migration lock on a connection of its own. Processes starting together migrate in turn: Kysely's
 * migrator looks for its tables before taking its own lock, and would race with another process creating them.
 */
export async function withAdvisoryLock<T>(connectionString: string, fn: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [migrationLockKey]);
    return await fn();
  } finally {
    await client.query('select pg_advisory_unlock($1)', [migrationLockKey]).catch(() => {});
    await client.end();
  }
}

/**
 * Makes a pool connection run the statements compiled once (prepared.ts) as named prepared statements: the
 * server parses and plans each once per connection instead of at every call, which on the hot paths (a send,
 * a receipt, a claim) is much of what a statement costs it. Every other statement runs as before.
 */
function prepareNamed(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' ? preparedName(text) : undefined;
    return name === undefined ? query(text, values, callback) : query({ name, text, values }, callback);
  }) as typeof client.query;
}

/** How long `truncateLog` tries again while another connection reads or writes the SQLite database. */
export const logTruncateWaitMs = 5_000;

/** `PRAGMA wal_checkpoint(TRUNCATE)`, tried again while other connections keep it from finishing. */
async function truncateSqliteLog(db: Db): Promise<boolean> {
  const started = Date.now();
  for (;;) {
    const { rows } = await sql<{ busy: number; log: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(db);
    // busy 0: every frame was copied and the log reset to 0 bytes (log -1 outside WAL mode, as for :memory:).
    if (rows[0] === undefined || Number(rows[0].busy) === 0) return true;
    if (Date.now() - started >= logTruncateWaitMs) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** The file (or `:memory:`) a SQLite DATABASE_URL names: `sqlite:path`, `sqlite://path` or a plain path. */
export const sqlitePath = (url: string) => url.replace(/^sqlite:(\/\/)?/, '');

/**
 * Opens the database named by a DATABASE_URL: `postgres://…` (optionally `?schema=name`, created when
 * missing), `sqlite:path`, `:memory:`, or a plain file path.
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(url)) return openPostgres(url, options);
  return openSqlite(sqlitePath(url), options);
}

function openSqlite(path: string, options: StoreOptions): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL in WAL mode never corrupts and loses nothing on a process crash; FULL also survives power loss.
  sqlite.pragma(`synchronous = ${options.sqliteSynchronous ?? 'NORMAL'}`);
  // Waiting for another process's write lock is the driver's, without stopping the event loop.
  sqlite.pragma('busy_timeout = 0');
  sqlite.pragma('foreign_keys = ON');
  // A deleted or overwritten row's bytes are zeroed in its page (and freed pages in full), so an erased phone
  // number is not left readable in the file (POST /erase, then truncateLog for the WAL's older page versions).
  sqlite.pragma('secure_delete = ON');
  // Statement journals (the undo of one statement inside a transaction, such as a fold's multi-row UPDATE)
  // spill to a temporary file past 64 KiB otherwise: a write system call per page for a file never read.
  sqlite.pragma('temp_store = MEMORY');
  const db = new Kysely<Database>({ dialect: new CachedSqliteDialect(sqlite) });
  return {
    db,
    dialect: 'sqlite',
    withMigrationLock: (fn) => fn(),
    connections: () => ({ max: 1, open: 1, idle: 0, waiting: 0 }),
    truncateLog: () => truncateSqliteLog(db),
    destroy: () => db.destroy(),
  };
}

async function openPostgres(url: string, options: StoreOptions): Promise<Store> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`invalid schema name in DATABASE_URL: ${schema}`);
  }
  const connectionString = parsed.toString();
  if (schema) {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query(`create schema if not exists ${schema}`);
    } finally {
      await client.end();
    }
  }
  const pool = new pg.Pool({
    connectionString,
    max: options.pgPoolSize ?? 10,
    // A server that went away without closing its connections (a host down, a network cut) would otherwise
    // keep a query waiting for as long as TCP does: the wait for a connection, the answer to a query sent
    // and the idle connection are each bounded.
    connectionTimeoutMillis: options.pgConnectTimeoutMs ?? pgDefaultTimeouts.connectMs,
    query_timeout: options.pgQueryTimeoutMs ?? pgDefaultTimeouts.queryMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // Prepared statements (prepareNamed) are planned for their values at every call, as unnamed ones are: a
    // generic plan, made once per connection, can use no partial index whose predicate a parameter holds
    // (the queues' `state = $1`), and one made while a table was small keeps reading it whole.
    options: [...(schema ? [`-c search_path=${schema}`] : []), '-c plan_cache_mode=force_custom_plan'].join(
      ' ',
    ),
  });
  // A connection that breaks (the server restarted, the network dropped) leaves the pool, and the next query
  // opens a new one; unheard, its error would end the process: the pool's for an idle connection, the
  // client's own for one in use. The query in flight still fails, and /ready says the database does not
  // answer until it does again.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    prepareNamed(client);
  });
  const db = new Kysely<Database>({ dialect: new SchemaPostgresDialect({ pool }, schema ?? 'public') });
  return {
    db,
    dialect: 'postgres',
    schema: schema ?? 'public',
    connectionString,
    withMigrationLock: (fn) => withAdvisoryLock(connectionString, fn),
    connections: () => ({
      max: pool.options.max,
      open: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
    truncateLog: async () => false,
    destroy: () => db.destroy(),
  };
}
