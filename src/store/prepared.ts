// Statements compiled by Kysely once per dialect, then bound to fresh values: the one cache of compiled
// statements. At thousands of sends, receipts or clicks a second, building and compiling each query anew
// cost about as much as the database running it (about 5 µs per inserted row on the click insert). The SQL
// is still Kysely's (so dialect-neutral, and the same text each time, so SQLite's prepared statement cache
// hits); only the per-call building is skipped. Executing a compiled query is a documented Kysely use
// ("splitting build, compile and execute").
import { type Compilable, CompiledQuery, type QueryResult } from 'kysely';
import type { Executor } from './db.ts';
import { transactionConnection } from './sqlite-driver.ts';

const slotPrefix = '\u0000slot:';

/** A placeholder value standing for argument `i` while the statement is compiled. */
export const slot = (i: number): string => `${slotPrefix}${i}`;

interface Shape {
  /**
   * The compiled SQL, keyed by nothing larger than itself: Kysely's syntax tree of the statement is dropped
   * (a bulk insert's tree holds a node per value, and a cache of them held tens of megabytes alive). A
   * driver reads only the SQL and its parameters; the query node kept is the raw SQL's.
   */
  compiled: CompiledQuery;
  /** For each bound parameter, the index of the argument it takes; undefined when parameter i takes argument i. */
  params: number[] | undefined;
}

interface Statements {
  shapes: Map<string, Shape>;
  /** Characters of SQL held: a bulk insert's text runs to tens of kilobytes. */
  sqlChars: number;
}

/**
 * The name under which PostgreSQL connections prepare each compiled statement's SQL (db.ts), so the server
 * parses and plans it once per connection rather than at every call. A name is never given to another text:
 * a connection that prepared it keeps its meaning. Past `maxNames` texts the map starts afresh (a text then
 * gets a new name, prepared again where used).
 */
const statementNames = new Map<string, string>();
let lastName = 0;
const maxNames = 4096;

/** The prepared-statement name of a compiled statement's SQL; undefined for any other statement. */
export function preparedName(sql: string): string | undefined {
  return statementNames.get(sql);
}

function nameStatement(sql: string): void {
  if (statementNames.has(sql)) return;
  if (statementNames.size >= maxNames) statementNames.clear();
  statementNames.set(sql, `pigeon_${++lastName}`);
}

/** Compiled statements per dialect adapter (SQLite and PostgreSQL may live in one process, as in tests). */
const cache = new WeakMap<object, Statements>();
/** Past either bound the cache starts afresh; the statements in use are compiled again at their next call. */
const maxStatements = 512;
const maxSqlChars = 16_000_000;

/**
 * Compiles `build`'s statement and records which argument each parameter takes. Throws if a parameter is not
 * a slot or an argument is never used: a builder that inlines a value (into the SQL text, or as a constant
 * parameter) would bind the first call's value forever, so a change in Kysely fails loudly in tests, never
 * silently in SQL. A slot used twice is fine: both places take the same argument.
 */
function compile(db: Executor, key: string, build: (db: Executor) => Compilable, args: number): Shape {
  const compiled = build(db).compile();
  const used = new Array<boolean>(args).fill(false);
  let identity = compiled.parameters.length === args;
  const params = compiled.parameters.map((p, at) => {
    const i = typeof p === 'string' && p.startsWith(slotPrefix) ? Number(p.slice(slotPrefix.length)) : -1;
    if (!(i >= 0 && i < args)) {
      throw new Error(`prepared statement ${key}: every value must be a slot of its ${args} arguments`);
    }
    used[i] = true;
    if (i !== at) identity = false;
    return i;
  });
  const unused = used.indexOf(false);
  if (unused >= 0) throw new Error(`prepared statement ${key}: argument ${unused} is not bound`);
  const { query } = CompiledQuery.raw(compiled.sql);
  nameStatement(compiled.sql);
  return {
    compiled: { sql: compiled.sql, query, queryId: compiled.queryId, parameters: [] },
    params: identity ? undefined : params,
  };
}

/**
 * The statement `build` makes from `slot(i)` placeholders, with `args[i]` in their places, compiled once per
 * dialect. `key` names the statement's shape: include anything that changes its SQL, such as a list length.
 */
export function bindPrepared(
  db: Executor,
  key: string,
  build: (db: Executor) => Compilable,
  args: readonly unknown[],
): CompiledQuery {
  const adapter = db.getExecutor().adapter;
  let statements = cache.get(adapter);
  if (!statements) {
    statements = { shapes: new Map(), sqlChars: 0 };
    cache.set(adapter, statements);
  }
  let shape = statements.shapes.get(key);
  if (!shape) {
    shape = compile(db, key, build, args.length);
    const chars = shape.compiled.sql.length;
    if (statements.shapes.size >= maxStatements || statements.sqlChars + chars > maxSqlChars) {
      statements.shapes.clear();
      statements.sqlChars = 0;
    }
    statements.shapes.set(key, shape);
    statements.sqlChars += chars;
  }
  const { compiled, params } = shape;
  let values: readonly unknown[] = args;
  if (params !== undefined) {
    const bound = new Array<unknown>(params.length);
    for (let p = 0; p < params.length; p++) bound[p] = args[params[p]];
    values = bound;
  }
  return { sql: compiled.sql, query: compiled.query, queryId: compiled.queryId, parameters: values };
}

/** Slots `from` … `from + count - 1`, for a list of values; typed to stand for any column's value. */
export const slots = (from: number, count: number): never[] =>
  Array.from({ length: count }, (_, i) => slot(from + i) as never);

/**
 * Pads `values` in place to a power of two, at least `min`, by repeating its last value, and returns that length.
 * For an `in (…)` list, or a VALUES list joined on a key, where a repeat changes nothing: statements keyed by
 * their list's length then take a handful of shapes instead of one per length, each compiled (and prepared by
 * the database) once.
 */
export function padToShape<T>(values: T[], min = 8): number {
  // Nothing to repeat: an empty list stays empty (and its statement is the caller's to skip).
  if (values.length === 0) return 0;
  let size = min;
  while (size < values.length) size *= 2;
  const last = values[values.length - 1];
  while (values.length < size) values.push(last);
  return size;
}

/** `values` cut into chunks of at most `max`, each padded by `padToShape` (its length is its shape's). */
export function shapedChunks<T>(values: readonly T[], max: number, min = 8): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < values.length; start += max) {
    const chunk = values.slice(start, start + max);
    padToShape(chunk, min);
    out.push(chunk);
  }
  return out;
}

/**
 * Runs the statement of `bindPrepared` and answers the whole result (insertId, affected rows): inside a SQLite
 * transaction straight on its connection (sqlite-driver.ts), else through Kysely's executor.
 */
export function executePrepared<R>(
  db: Executor,
  key: string,
  build: (db: Executor) => Compilable,
  args: readonly unknown[],
): Promise<QueryResult<R>> {
  const compiled = bindPrepared(db, key, build, args);
  const connection = transactionConnection(db);
  return connection ? connection.executeQuery<R>(compiled) : db.executeQuery<R>(compiled);
}

/** Runs the statement of `bindPrepared` and answers its rows. */
export async function runPrepared<R>(
  db: Executor,
  key: string,
  build: (db: Executor) => Compilable,
  args: readonly unknown[],
): Promise<R[]> {
  return (await executePrepared<R>(db, key, build, args)).rows;
}
