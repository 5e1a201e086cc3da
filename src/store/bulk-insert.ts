// Multi-row INSERTs for the bulk paths (100,000 messages in one send). Kysely builds an operation tree per
// value and compiles it on every call, which costs more than SQLite's insert itself at that size; the SQL
// of an N-row insert only depends on the dialect, the table, the columns and N, so it is compiled once
// (prepared.ts) and reused with fresh parameters.
import { PostgresAdapter, type QueryResult, sql } from 'kysely';
import type { Executor } from './db.ts';
import { executePrepared, slot } from './prepared.ts';
import type { Database } from './schema.ts';

/**
 * Inserts `rows` in batches of `batchRows`, each row given as its values in `columns` order. Keep
 * batchRows × columns under 32,766 (SQLite's bound-parameter limit; PostgreSQL allows 65,535). What is left
 * after the full batches goes in batches of powers of two (77 rows: 64, 8, 4 and 1), so that the statements of
 * every row count take a handful of shapes, each compiled and prepared once, not one shape per count.
 */
export async function insertRows<T extends keyof Database>(
  db: Executor,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: readonly unknown[][],
  batchRows: number,
): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter && rows.every(plainValues)) {
    for (let start = 0; start < rows.length; start += batchRows) {
      await insertJson(db, table, columns, rows.slice(start, start + batchRows));
    }
    return;
  }
  for (let start = 0; start < rows.length; ) {
    const left = rows.length - start;
    const end = start + (left >= batchRows ? batchRows : 2 ** Math.floor(Math.log2(left)));
    const params: unknown[] = new Array((end - start) * columns.length);
    let at = 0;
    for (let r = start; r < end; r++) {
      const row = rows[r];
      for (let c = 0; c < columns.length; c++) params[at++] = row[c];
    }
    await insertBatch(db, table, columns, end - start, params);
    start = end;
  }
}

/**
 * Inserts `rows` rows given as one list of values, row after row in `columns` order, in one statement
 * compiled once per table, columns and row count.
 */
export function insertBatch<T extends keyof Database>(
  db: Executor,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: number,
  values: readonly unknown[],
): Promise<QueryResult<never>> {
  return executePrepared(
    db,
    `insert:${table}(${columns.join(',')})x${rows}`,
    (q) =>
      q.insertInto(table).values(
        Array.from({ length: rows }, (_, r) => {
          const row: Record<string, string> = {};
          columns.forEach((column, c) => {
            row[column] = slot(r * columns.length + c);
          });
          return row as never;
        }),
      ),
    values,
  );
}

/** `String.prototype.isWellFormed` and `toWellFormed` (Node 20; ES2024, past this project's TypeScript lib). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * Whether a row's values all travel as JSON unchanged: a Buffer, a bigint or a Date would not, and JSON would
 * turn NaN into null where a parameter is refused by the column.
 */
function plainValues(row: readonly unknown[]): boolean {
  for (const value of row) {
    if (value === null || value === undefined || typeof value === 'string') continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) return false;
  }
  return true;
}

/**
 * On PostgreSQL, any number of rows in one statement of one shape: the rows as one JSON parameter, which the
 * server spreads into the table's columns (`json_populate_recordset`, each value read by its column's type).
 * Serialising one JSON text costs the driver a third to a half of binding each value as a parameter, and a
 * batch of 77 rows is one statement instead of four (64, 8, 4, 1).
 */
function insertJson<T extends keyof Database>(
  db: Executor,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  rows: readonly unknown[][],
): Promise<QueryResult<never>> {
  const objects = rows.map((row) => {
    const object: Record<string, unknown> = {};
    for (let c = 0; c < columns.length; c++) {
      const value = row[c];
      // A lone UTF-16 surrogate (JSON allows "\ud800" in a request) is refused by PostgreSQL's JSON reader;
      // the parameter path writes it as U+FFFD, the replacement character, and so does this one.
      const text = typeof value === 'string' ? (value as unknown as WellFormed) : undefined;
      object[columns[c]] = text && !text.isWellFormed() ? text.toWellFormed() : value;
    }
    return object;
  });
  const names = sql.join(columns.map((column) => sql.ref(column)));
  return executePrepared(
    db,
    `insert-json:${table}(${columns.join(',')})`,
    () => ({
      compile: () =>
        sql`insert into ${sql.table(table)} (${names}) select ${names} from json_populate_recordset(null::${sql.table(table)}, ${slot(0)}::json)`.compile(
          db,
        ),
    }),
    [JSON.stringify(objects)],
  );
}
