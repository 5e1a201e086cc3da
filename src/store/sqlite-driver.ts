// Kysely's SQLite driver prepares every statement anew; this one keeps prepared statements by SQL text
// (hot paths run the same few queries thousands of times a second) and opens write transactions with
// BEGIN IMMEDIATE so a second process (the CLI) waits on busy_timeout instead of failing on lock upgrade.
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SelectQueryNode,
  SqliteDialect,
} from 'kysely';

const maxCachedStatements = 1000;

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
    if (stmt.reader) return Promise.resolve({ rows: stmt.all(params) as R[] });
    const { changes, lastInsertRowid } = stmt.run(params);
    return Promise.resolve({
      numAffectedRows: BigInt(changes),
      insertId: BigInt(lastInsertRowid),
      rows: [],
    });
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error('only select queries can be streamed');
    for (const row of this.prepare(compiled.sql).iterate(compiled.parameters as unknown[])) {
      yield { rows: [row as R] };
    }
  }
}

class CachedSqliteDriver implements Driver {
  private readonly connection: CachedConnection;
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

export class CachedSqliteDialect extends SqliteDialect {
  constructor(private readonly database: BetterSqlite3.Database) {
    super({ database });
  }

  override createDriver(): Driver {
    return new CachedSqliteDriver(this.database);
  }
}
