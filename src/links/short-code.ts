import { randomBase62 } from '../shared/ids.ts';

/**
 * Short codes are fixed-length, uniformly random base62 strings: unguessable (10 characters is 59 bits)
 * and never reused, which the unique index on links.code enforces.
 */
export const newShortCodes = (length: number, count: number): string[] => randomBase62(length, count);

export const isShortCode = (value: string, length: number): boolean =>
  value.length === length && /^[0-9A-Za-z]+$/.test(value);
