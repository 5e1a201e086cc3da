import { randomBytes } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Uniform random base62 strings, `count` of them at once (one randomBytes call for a whole campaign).
 * Rejection sampling keeps every character uniform: bytes >= 248 are redrawn.
 */
export function randomBase62(length: number, count = 1): string[] {
  const out: string[] = [];
  let pool = randomBytes(Math.ceil(length * count * 1.1) + 16);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    let s = '';
    while (s.length < length) {
      if (pos >= pool.length) {
        pool = randomBytes(length * 4 + 16);
        pos = 0;
      }
      const byte = pool[pos++];
      if (byte < 248) s += alphabet[byte % 62];
    }
    out.push(s);
  }
  return out;
}

/** Database ids go out as strings of integers (the Java SDK parses them as integers). */
export const idOut = (id: number | bigint): string => String(id);

/** Parses an id from a path or body; anything that is not a positive integer is not found. */
export function idIn(value: unknown): number | undefined {
  const s = String(value ?? '');
  if (!/^[1-9][0-9]{0,15}$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}
