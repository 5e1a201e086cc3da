// When a failed webhook delivery is tried again: svix's schedule (the first attempt at once, then 5 s,
// 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after the previous one, about 27.6 hours in all) with ±10 %
// jitter, so the deliveries a receiver's outage failed together do not all come back in the same second.

/** Delay before each attempt, after the previous one; the first is at once. */
export const retryScheduleMs = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
] as const;

export const maxAttempts = retryScheduleMs.length;

export const jitterRatio = 0.1;

/**
 * The delay before the attempt after attempt `failed` (1-based), jittered; undefined when that was the last.
 * `random` is a number in [0, 1).
 */
export function retryDelayMs(failed: number, random: number = Math.random()): number | undefined {
  if (failed >= maxAttempts) return undefined;
  const base = retryScheduleMs[failed];
  return Math.round(base * (1 - jitterRatio + 2 * jitterRatio * random));
}

/**
 * A `Retry-After` header as a delay from `now`: delta-seconds or an HTTP date (RFC 9110), capped at `maxMs`.
 * Undefined when absent or unreadable; a date in the past is a delay of 0.
 */
export function retryAfterMs(
  value: string | string[] | undefined,
  now: number,
  maxMs: number,
): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  let ms: number;
  if (/^\d+$/.test(raw)) ms = Number(raw) * 1000;
  else {
    // An HTTP date names its weekday and month; Date.parse alone would also take "-5" or "1.5" as dates.
    const at = /[A-Za-z]{3}/.test(raw) ? Date.parse(raw) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(0, ms), maxMs);
}
