// How many rows and ids delivery's statements take at once, shared by its repositories.

/** Rows written or ids matched per statement where no compiled shape is kept. */
export const batchRows = 500;

/** SMSC ids looked up in one statement (a power of two). */
export const maxLookupIds = 512;

export function chunks<T>(items: T[], size = batchRows): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
