import { describe, expect, it } from 'vitest';
import { zonedTime } from './zoned-time.ts';

const paris = zonedTime('Europe/Paris');
const at = (iso: string) => Date.parse(iso);

describe('dates in the configured zone', () => {
  it('ISO 8601 with the offset of the day, in whole seconds or with the milliseconds there are', () => {
    expect(paris.isoSecond(at('2026-01-15T09:30:05.999Z'))).toBe('2026-01-15T10:30:05+01:00');
    expect(paris.isoSecond(at('2026-07-15T09:30:05.001Z'))).toBe('2026-07-15T11:30:05+02:00');
    expect(paris.isoInstant(at('2026-07-15T09:30:05.250Z'))).toBe('2026-07-15T11:30:05.250+02:00');
    expect(paris.isoInstant(at('2026-07-15T09:30:05.000Z'))).toBe('2026-07-15T11:30:05+02:00');
  });

  it('Y-m-d H:i:s on the wall clock, across the change to summer time', () => {
    expect(paris.wallTime(at('2026-03-29T00:59:59.500Z'))).toBe('2026-03-29 01:59:59');
    expect(paris.wallTime(at('2026-03-29T01:00:00.000Z'))).toBe('2026-03-29 03:00:00');
    expect(paris.isoSecond(at('2026-03-29T01:00:00.000Z'))).toBe('2026-03-29T03:00:00+02:00');
  });

  it('a formatter that remembers its last second still answers each second its own date', () => {
    const { isoSecond } = zonedTime('Europe/Paris');
    const base = at('2026-10-25T00:59:59.000Z');
    expect([0, 400, 999, 1000, 1001, 0].map((d) => isoSecond(base + d))).toEqual([
      '2026-10-25T02:59:59+02:00',
      '2026-10-25T02:59:59+02:00',
      '2026-10-25T02:59:59+02:00',
      '2026-10-25T02:00:00+01:00',
      '2026-10-25T02:00:00+01:00',
      '2026-10-25T02:59:59+02:00',
    ]);
  });
});
