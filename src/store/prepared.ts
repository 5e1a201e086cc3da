// Statements of the send path compiled by Kysely once per dialect, then bound to fresh values. At
// thousands of sends a second, building and compiling each query anew cost about as much as SQLite
// running it. The SQL is still Kysely's (so dialect-neutral); only the per-call building is skipped.
import { type Compilable, CompiledQuery } from 'kysely';
import type { Executor } from './db.ts';

const slotPrefix = '\u0000slot:';

/** A placeholder value standing for argument `i` while the statement is compiled. */
export const slot = (i: number): string => `${slotPrefix}${i}`;

interface Shape {
  sql: string;
  /** For each bound parameter, the index of the argument it takes. */
  params: number[];
}

const cache = new WeakMap<object, Map<string, Shape>>();

/**
 * Runs the statement `build` makes from `slot(i)` placeholders, with `args[i]` in their places. `key`
 * names the statement's shape (include anything that changes its SQL, such as a list length).
 */
export async function runPrepared<R>(
  db: Executor,
  key: string,
  build: (db: Executor) => Compilable,
  args: readonly unknown[],
): Promise<R[]> {
  const adapter = db.getExecutor().adapter;
  let shapes = cache.get(adapter);
  if (!shapes) {
    shapes = new Map();
    cache.set(adapter, shapes);
  }
  let shape = shapes.get(key);
  if (!shape) {
    const compiled = build(db).compile();
    const params = compiled.parameters.map((p) => {
      if (typeof p !== 'string' || !p.startsWith(slotPrefix)) {
        throw new Error(`prepared statement ${key}: every value must be a slot`);
      }
      return Number(p.slice(slotPrefix.length));
    });
    shape = { sql: compiled.sql, params };
    if (shapes.size >= 512) shapes.clear();
    shapes.set(key, shape);
  }
  const values = shape.params.map((i) => args[i]);
  const result = await db.executeQuery<R>(CompiledQuery.raw(shape.sql, values));
  return result.rows;
}
