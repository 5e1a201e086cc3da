// Case-insensitive substring search in SQL, the same on SQLite and PostgreSQL for ASCII letters.
import { type RawBuilder, sql } from 'kysely';

/**
 * Whether any of `columns` holds `term`, letters compared through `lower()` on both sides; `%`, `_` and the
 * escape character `!` in the term match themselves.
 */
export function contains(columns: readonly string[], term: string): RawBuilder<boolean> {
  const pattern = `%${term.replace(/[!%_]/g, (c) => `!${c}`)}%`;
  const tests = columns.map((c) => sql`lower(${sql.ref(c)}) like lower(${pattern}) escape '!'`);
  return sql<boolean>`(${sql.join(tests, sql` or `)})`;
}
