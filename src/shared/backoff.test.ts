import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff.ts';

describe('backoff', () => {
  it('starts at the base, doubles after each failure and stops at the ceiling', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => backoffMs(attempt, 200, 10_000))).toEqual([
      200, 400, 800, 1600, 3200, 6400, 10_000,
    ]);
    expect(backoffMs(0, 200, 10_000)).toBe(200);
    expect(backoffMs(5000, 30_000, 3_600_000)).toBe(3_600_000);
  });
});
