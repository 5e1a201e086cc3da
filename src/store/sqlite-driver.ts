// Kysely's SQLite driver prepares every statement anew; this one keeps prepared statements by SQL text
// (hot paths run the same few queries thousands of times a second) and opens write transactions with
// BEGIN IMMEDIATE, so a transaction takes the database's one write lock before it reads, never failing on
// lock upgrade halfway.
//
// Several processes write the same file (the supervisor's roles, the CLI). SQLite's own busy handler would
// wait for the write lock by sleeping inside the call, with the whole event loop stopped and a sleep of up
// to 100 ms that outlasts most transactions of the other process, which then takes the lock again first: a
// process that writes often starves the others. So the connection is opened with busy_timeout 0, and a
// statement that finds the lock taken (SQLITE_BUSY, which means it did nothing) is tried again after the
// event loop has turned, within a millisecond and for at most `lockWaitMs`: the process goes on with its
// other work meanwhile, and gets the lock soon after it is free.
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
  SelectQueryNode,
  SqliteDialect,
} from 'kysely';

const maxCachedStatements = 1000;
/** How long a statement waits for the write lock before its SQLITE_BUSY is thrown. */
export const lockWaitMs = 10_000;

const isBusy = (error: unknown) =>
  typeof (error as { code?: unknown }).code === 'string' &&
  (error as { code: string }).code.startsWith('SQLITE_BUSY');

const nextTurn = (waited: number) =>
  new Promise<void>((resolve) => {
    // The first tries come after the event loop's I/O, then every millisecond.
    if (waited < 4) setImmediate(resolve);
    else setTimeout(resolve, 1);
  });

/**
 * Runs `attempt` again, after the event loop has turned, while the database is locked by another connection
 * (its first try has just failed so): for at most `lockWaitMs`, then its SQLITE_BUSY is thrown.
 */
async function retryWhileBusy<T>(attempt: () => T): Promise<T> {
  const started = Date.now();
  for (let tries = 0; ; tries++) {
    await nextTurn(tries);
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error) || Date.now() - started >= lockWaitMs) throw error;
    }
  }
}

class CachedConnection implements DatabaseConnection {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(private readonly db: BetterSqlite3.Database) {}

  private prepare(sql: string): BetterSqlite3.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= maxCachedStatements) this.statements.clear();
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const stmt = this.prepare(compiled.sql);
    const params = compiled.parameters as unknown[];
    const run = (): QueryResult<R> => {
      if (stmt.reader) return { rows: stmt.all(params) as R[] };
      const { changes, lastInsertRowid } = stmt.run(params);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    };
    try {
      return Promise.resolve(run());
    } catch (error) {
      if (!isBusy(error)) return Promise.reject(error);
      return retryWhileBusy(run);
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error('only select queries can be streamed');
    for (const row of this.prepare(compiled.sql).iterate(compiled.parameters as unknown[])) {
      yield { rows: [row as R] };
    }
  }
}

class CachedSqliteDriver implements Driver {
  readonly connection: CachedConnection;
  private locked: Promise<void> | undefined;
  private unlock: (() => void) | undefined;

  constructor(private readonly db: BetterSqlite3.Database) {
    this.connection = new CachedConnection(db);
  }

  async init(): Promise<void> {}

  /** SQLite has one connection: callers take turns. */
  async acquireConnection(): Promise<DatabaseConnection> {
    while (this.locked) await this.locked;
    this.locked = new Promise((resolve) => {
      this.unlock = resolve;
    });
    return this.connection;
  }

  async beginTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const unlock = this.unlock;
    this.locked = undefined;
    this.unlock = undefined;
    unlock?.();
  }

  async destroy(): Promise<void> {
    this.db.close();
  }
}

/** The dialect of each SQLite Kysely instance, by the adapter Kysely keeps (what an executor exposes). */
const dialects = new WeakMap<object, CachedSqliteDialect>();

export class CachedSqliteDialect extends SqliteDialect {
  private driver: CachedSqliteDriver | undefined;

  constructor(private readonly database: BetterSqlite3.Database) {
    super({ database });
  }

  override createDriver(): Driver {
    this.driver = new CachedSqliteDriver(this.database);
    return this.driver;
  }

  override createAdapter(): DialectAdapter {
    const adapter = super.createAdapter();
    dialects.set(adapter, this);
    return adapter;
  }

  /** The one connection of this database (Kysely makes the driver after the adapter). */
  get connection(): CachedConnection | undefined {
    return this.driver?.connection;
  }
}

/**
 * The connection a SQLite transaction holds, to run a compiled statement on directly, or undefined (not a
 * transaction, or not this driver). Kysely's executor hands each statement to the connection through a chain
 * of async steps (the connection provider, the runner, the result plugins: none here); inside a transaction
 * the connection is already this process's, and SQLite runs the statement synchronously, so the chain only
 * adds promises and allocations, at every statement of every send, receipt and webhook attempt.
 */
export function transactionConnection(db: {
  readonly isTransaction: boolean;
  getExecutor(): { readonly adapter: object };
}): DatabaseConnection | undefined {
  if (!db.isTransaction) return undefined;
  return dialects.get(db.getExecutor().adapter)?.connection;
}
