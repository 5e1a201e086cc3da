import { describe, expect, it } from 'vitest';
import { maxAttempts, retryAfterMs, retryDelayMs, retryScheduleMs } from './retry-schedule.ts';

describe('retry schedule', () => {
  it('is svix’s: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — about 27.6 hours over 8 attempts', () => {
    expect(maxAttempts).toBe(8);
    expect(retryScheduleMs.reduce((a, b) => a + b, 0)).toBe(27 * 3_600_000 + 35 * 60_000 + 5_000);
  });

  it('jitters each wait by at most ±10 %, and ends after the 8th attempt', () => {
    expect(retryDelayMs(1, 0)).toBe(4500);
    expect(retryDelayMs(1, 0.5)).toBe(5000);
    expect(retryDelayMs(1, 0.999999)).toBe(5500);
    expect(retryDelayMs(7, 0)).toBe(36_000_000 * 0.9);
    expect(retryDelayMs(8, 0.5)).toBeUndefined();
    for (let failed = 1; failed < 8; failed++) {
      const delay = retryDelayMs(failed)!;
      expect(delay).toBeGreaterThanOrEqual(retryScheduleMs[failed] * 0.9);
      expect(delay).toBeLessThanOrEqual(retryScheduleMs[failed] * 1.1);
    }
  });

  it('reads Retry-After as seconds or an HTTP date, capped, and ignores what it cannot read', () => {
    const now = Date.UTC(2026, 0, 5, 9, 0, 0);
    const cap = 3_600_000;
    expect(retryAfterMs('120', now, cap)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now, cap)).toBe(0);
    expect(retryAfterMs('Mon, 05 Jan 2026 09:10:00 GMT', now, cap)).toBe(600_000);
    expect(retryAfterMs('Mon, 05 Jan 2026 08:00:00 GMT', now, cap)).toBe(0);
    expect(retryAfterMs('999999', now, cap)).toBe(cap);
    expect(retryAfterMs('Tue, 06 Jan 2026 09:00:00 GMT', now, cap)).toBe(cap);
    expect(retryAfterMs(['30', '60'], now, cap)).toBe(30_000);
    for (const bad of [undefined, '', '-5', '1.5', 'soon'])
      expect(retryAfterMs(bad, now, cap), String(bad)).toBeUndefined();
  });
});
