import { describe, expect, it } from 'vitest';
import { cutoffOf, parsePeriod } from './retention-period.ts';

describe('retention periods', () => {
  it('reads days, months and -1, and refuses the rest with a reason', () => {
    expect(parsePeriod('30d')).toEqual({ ok: true, period: '30d' });
    expect(parsePeriod(' 6M ')).toEqual({ ok: true, period: '6m' });
    expect(parsePeriod('-1')).toEqual({ ok: true, period: '-1' });
    expect(parsePeriod(-1)).toEqual({ ok: true, period: '-1' });
    expect(parsePeriod('0d')).toEqual({ ok: false, reason: 'must be between 1d and 3650d' });
    expect(parsePeriod('121m')).toEqual({ ok: false, reason: 'must be between 1m and 120m' });
    for (const bad of ['', '6', '6y', 'd', '1.5m', null, {}, '-2']) {
      expect(parsePeriod(bad)).toMatchObject({ ok: false });
    }
  });

  it('turns a period into the instant before which data goes', () => {
    const now = Date.UTC(2026, 10, 23, 12, 0, 0);
    expect(cutoffOf('-1', now)).toBeUndefined();
    expect(cutoffOf('30d', now)).toBe(now - 30 * 86_400_000);
    expect(cutoffOf('6m', now)).toBe(Date.UTC(2026, 4, 23, 12, 0, 0));
    expect(cutoffOf('12m', now)).toBe(Date.UTC(2025, 10, 23, 12, 0, 0));
  });
});
