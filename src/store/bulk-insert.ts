// Multi-row INSERTs for the bulk paths (100,000 messages in one send). Kysely builds an operation tree per
// value and compiles it on every call, which costs more than SQLite's insert itself at that size; the SQL
// of an N-row insert only depends on the dialect, the table, the columns and N, so it is compiled once
// (prepared.ts) and reused with fresh parameters.
import type { QueryResult } from 'kysely';
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
