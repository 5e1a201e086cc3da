import { describe, expect, it } from 'vitest';
import { ApiError } from '../shared/errors.ts';
import { dueAt, parseDelay } from './delay.ts';

const paris = 'Europe/Paris';

function statusOf(run: () => unknown): number | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof ApiError ? error.status : undefined;
  }
  return undefined;
}

describe('delay', () => {
  it('reads Y-m-d H:i:s as wall-clock time in the configured zone', () => {
    expect(parseDelay('2026-01-10 10:00:00', paris)).toBe(Date.UTC(2026, 0, 10, 9, 0, 0));
    expect(parseDelay('2026-05-04 14:30:15', paris)).toBe(Date.UTC(2026, 4, 4, 12, 30, 15));
    expect(parseDelay('2026-05-04 14:30:15', 'UTC')).toBe(Date.UTC(2026, 4, 4, 14, 30, 15));
  });

  it('a time inside the spring-forward gap moves forward by the gap', () => {
    // 02:30 does not exist in Paris on 2026-03-29: it becomes 03:30 summer time (01:30 UTC).
    expect(parseDelay('2026-03-29 02:30:00', paris)).toBe(Date.UTC(2026, 2, 29, 1, 30, 0));
    expect(parseDelay('2026-03-29 01:59:59', paris)).toBe(Date.UTC(2026, 2, 29, 0, 59, 59));
    expect(parseDelay('2026-03-08 02:30:00', 'America/New_York')).toBe(Date.UTC(2026, 2, 8, 7, 30, 0));
  });

  it('an ambiguous autumn time takes its first (summer-time) occurrence', () => {
    // 02:30 happens twice in Paris on 2026-10-25: at 00:30 UTC (+02:00) and at 01:30 UTC (+01:00).
    expect(parseDelay('2026-10-25 02:30:00', paris)).toBe(Date.UTC(2026, 9, 25, 0, 30, 0));
    expect(parseDelay('2026-10-25 02:00:00', paris)).toBe(Date.UTC(2026, 9, 25, 0, 0, 0));
    // 03:00 is after the repeated hour: only winter time reads it.
    expect(parseDelay('2026-10-25 03:00:00', paris)).toBe(Date.UTC(2026, 9, 25, 2, 0, 0));
    expect(parseDelay('2026-11-01 01:30:00', 'America/New_York')).toBe(Date.UTC(2026, 10, 1, 5, 30, 0));
  });

  it('a bad format is -4', () => {
    for (const bad of [
      '2026/05/04 14:30:00',
      '2026-05-04T14:30:00',
      '2026-5-4 14:30:00',
      '2026-05-04 14:30',
      'tomorrow',
    ]) {
      expect(
        statusOf(() => parseDelay(bad, paris)),
        bad,
      ).toBe(-4);
    }
  });

  it('an impossible date or time is -4', () => {
    for (const bad of [
      '2026-02-30 10:00:00',
      '2025-02-29 10:00:00',
      '2026-13-01 00:00:00',
      '2026-00-10 00:00:00',
      '2026-01-01 24:00:00',
      '2026-01-01 10:60:00',
      '2026-01-01 10:00:60',
    ]) {
      expect(
        statusOf(() => parseDelay(bad, paris)),
        bad,
      ).toBe(-4);
    }
    expect(parseDelay('2028-02-29 10:00:00', paris)).toBe(Date.UTC(2028, 1, 29, 9, 0, 0));
  });

  it('a delay in the past, or none, means now', () => {
    const now = Date.UTC(2026, 5, 1, 12, 0, 0);
    expect(dueAt(undefined, paris, now)).toBe(now);
    expect(dueAt('', paris, now)).toBe(now);
    expect(dueAt('2020-01-01 00:00:00', paris, now)).toBe(now);
    expect(dueAt('2026-06-01 15:00:00', paris, now)).toBe(Date.UTC(2026, 5, 1, 13, 0, 0));
  });
});
