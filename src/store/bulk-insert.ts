// Multi-row INSERTs for the bulk paths (100,000 messages in one send). Kysely builds an operation tree per
// value and compiles it on every call, which costs more than SQLite's insert itself at that size; the SQL
// of an N-row insert only depends on the dialect, the table, the columns and N, so it is compiled by Kysely
// once and reused with fresh parameters. The SQL stays Kysely's, and so stays dialect-neutral.
import { CompiledQuery } from 'kysely';
import type { Executor } from './db.ts';
import type { Database } from './schema.ts';

/** Compiled statements per dialect adapter (SQLite and PostgreSQL may live in one process, as in tests). */
const cache = new WeakMap<object, Map<string, string>>();
const maxCachedStatements = 256;

function insertSql<T extends keyof Database>(
  db: Executor,
  table: T,
  columns: readonly string[],
  rows: number,
): string {
  const adapter = db.getExecutor().adapter;
  let statements = cache.get(adapter);
  if (!statements) {
    statements = new Map();
    cache.set(adapter, statements);
  }
  const key = `${table}(${columns.join(',')})x${rows}`;
  let text = statements.get(key);
  if (text === undefined) {
    const placeholder = Object.fromEntries(columns.map((c) => [c, null]));
    const values = Array.from({ length: rows }, () => placeholder);
    // The placeholder rows only fix the shape of the SQL; their values are never sent.
    text = db
      .insertInto(table)
      .values(values as never)
      .compile().sql;
    if (statements.size >= maxCachedStatements) statements.clear();
    statements.set(key, text);
  }
  return text;
}

/**
 * Inserts `rows` in batches of `batchRows`, each row given as its values in `columns` order. Keep
 * batchRows × columns under 32,766 (SQLite's bound-parameter limit; PostgreSQL allows 65,535).
 */
export async function insertRows<T extends keyof Database>(
  db: Executor,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: readonly unknown[][],
  batchRows: number,
): Promise<void> {
  for (let start = 0; start < rows.length; start += batchRows) {
    const end = Math.min(rows.length, start + batchRows);
    const params: unknown[] = new Array((end - start) * columns.length);
    let at = 0;
    for (let r = start; r < end; r++) {
      const row = rows[r];
      for (let c = 0; c < columns.length; c++) params[at++] = row[c];
    }
    await db.executeQuery(CompiledQuery.raw(insertSql(db, table, columns, end - start), params));
  }
}
