import { randomBytes } from 'node:crypto';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random bytes drawn ahead for small requests, each byte handed out once. */
const ahead = { bytes: Buffer.alloc(0), pos: 0 };
const aheadSize = 8192;

/**
 * `n` bytes from the system's CSPRNG. A small request is served from bytes drawn ahead: a draw of its own cost
 * each send with a link 13 µs of the API's 240 (a profile of the send bench); the pool's refill is one
 * draw for some 300 of them.
 */
function random(n: number): Buffer {
  if (n > aheadSize / 8) return randomBytes(n);
  if (ahead.pos + n > ahead.bytes.length) {
    ahead.bytes = randomBytes(aheadSize);
    ahead.pos = 0;
  }
  const out = ahead.bytes.subarray(ahead.pos, ahead.pos + n);
  ahead.pos += n;
  return out;
}

/**
 * Uniform random base62 strings, `count` of them at once (one draw for a whole campaign).
 * Rejection sampling keeps every character uniform: bytes >= 248 are redrawn.
 */
export function randomBase62(length: number, count = 1): string[] {
  const out: string[] = [];
  let pool = random(Math.ceil(length * count * 1.1) + 16);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    let s = '';
    while (s.length < length) {
      if (pos >= pool.length) {
        pool = random(length * 4 + 16);
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
