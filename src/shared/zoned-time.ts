// Dates as the API and the webhooks give them, in the configured TIMEZONE: ISO 8601 with the zone's offset
// (event bodies, the attempt log) or `Y-m-d H:i:s` on the zone's wall clock (the form `delay` takes, and the
// one the Java SDK parses; campaign reads and CLICKER events).
import { DateTime } from 'luxon';

/** ISO 8601 with the zone's offset; milliseconds only when the instant has any. */
const isoIn = (zone: string, ms: number): string =>
  DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: true }) ?? new Date(ms).toISOString();

const wallTimeIn = (zone: string, ms: number): string =>
  DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');

/**
 * Formats to the second, remembering the last second it formatted: the hot paths (receipts, clicks) date
 * thousands of events a second with a handful of distinct seconds, and the zone arithmetic was a visible
 * share of their CPU.
 */
function perSecond(format: (secondMs: number) => string): (ms: number) => string {
  let lastSecond = Number.NaN;
  let last = '';
  return (ms) => {
    const second = Math.floor(ms / 1000);
    if (second !== lastSecond) {
      last = format(second * 1000);
      lastSecond = second;
    }
    return last;
  };
}

export type ZonedTime = ReturnType<typeof zonedTime>;

/** The date formats of one zone. Each caller keeps its own, so each remembers its own last second. */
export function zonedTime(zone: string) {
  return {
    /** ISO 8601 with the zone's offset, in whole seconds: `2026-05-04T14:30:00+02:00`. */
    isoSecond: perSecond((ms) => isoIn(zone, ms)),
    /** ISO 8601 with the zone's offset, with the milliseconds when there are any: `…T14:30:00.250+02:00`. */
    isoInstant: (ms: number) => isoIn(zone, ms),
    /** `Y-m-d H:i:s` on the zone's wall clock: `2026-05-04 14:30:00`. */
    wallTime: perSecond((ms) => wallTimeIn(zone, ms)),
  };
}
