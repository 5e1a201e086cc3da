// The dates of a token as its reads answer them. A token's expiry is whatever was stored when it was made:
// before ttl was bounded to ten years, a huge ttl stored an expiry past year 9999, past the last date
// JavaScript holds, or (SQLite) a float such as 1e300. `Y-m-d H:i:s` cannot write those (Luxon answers
// "Invalid DateTime" or a five-digit year, which no SDK parses), so a read shows them at the last second it can
// write. Only the answer is clamped: the stored expiry still decides whether the token signs in.
import { DateTime } from 'luxon';

/** Clamps an instant (ms) into the range `Y-m-d H:i:s` writes in `zone`: from 1970 to 9999-12-31 23:59:59. */
export function tokenDateClamp(zone: string): (ms: number) => number {
  const lastMs = DateTime.fromObject(
    { year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59 },
    { zone },
  ).toMillis();
  // `!(ms >= 0)` is also true of NaN, a value that is no number at all.
  return (ms) => (!(ms >= 0) ? 0 : Math.min(ms, lastMs));
}
