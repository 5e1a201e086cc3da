// Compile once, bind many times. Building and compiling a Kysely query costs about 5 µs per inserted row
// (measured on the click insert), which on the redirect path was as much as the SQL itself. A shape is a
// query compiled once with placeholder inputs; binding puts real values where the placeholders went, giving
// the same SQL text (so SQLite's prepared statement cache hits) with no builder work. Executing a compiled
// query is a documented Kysely use ("splitting build, compile and execute").
import type { Compilable, CompiledQuery } from 'kysely';

/** Placeholder inputs are numbers from here on; no real input of these queries comes near it. */
const placeholderBase = 7_000_000_000_000;

export interface QueryShape {
  compiled: CompiledQuery;
  /** For each parameter of the compiled query, the index of the input it takes. */
  slots: number[];
}

/**
 * Compiles `build(placeholder)` where `placeholder(i)` stands for input i, and records where each input
 * landed. Throws if any parameter is not exactly one of the inputs (a builder that inlines, duplicates or
 * adds values cannot be bound safely), so a change in Kysely fails loudly in tests, never silently in SQL.
 */
export function compileShape(
  inputs: number,
  build: (placeholder: (i: number) => number) => Compilable,
): QueryShape {
  const compiled = build((i) => placeholderBase + i).compile();
  const seen = new Set<number>();
  const slots = compiled.parameters.map((parameter) => {
    const slot = typeof parameter === 'number' ? parameter - placeholderBase : -1;
    if (!Number.isInteger(slot) || slot < 0 || slot >= inputs || seen.has(slot)) {
      throw new Error(`query shape: parameter ${String(parameter)} is not one of its ${inputs} inputs`);
    }
    seen.add(slot);
    return slot;
  });
  if (seen.size !== inputs) throw new Error(`query shape: ${inputs - seen.size} inputs were not bound`);
  return { compiled, slots };
}

/** The shape's compiled query with `values[i]` for input i. */
export function bindShape(shape: QueryShape, values: readonly unknown[]): CompiledQuery {
  const { slots } = shape;
  const parameters = new Array<unknown>(slots.length);
  for (let p = 0; p < slots.length; p++) parameters[p] = values[slots[p]];
  return { ...shape.compiled, parameters };
}
