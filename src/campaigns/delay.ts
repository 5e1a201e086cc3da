// The `delay` of a send: `Y-m-d H:i:s` wall-clock time in the configured zone (Europe/Paris by default).
import { DateTime } from 'luxon';
import { ApiError, Status } from '../shared/errors.ts';

const pattern = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const dayMs = 86_400_000;

const delayError = (details: string) => new ApiError(Status.delay, details);

/**
 * Reads a delay as an instant (ms since the epoch). Bad format or an impossible date is -4.
 *
 * Daylight saving, decided once so a send never lands at a surprising time:
 * - a wall time inside the spring-forward gap (02:30 on the last Sunday of March in Paris) does not exist;
 *   it moves forward by the gap (03:30 summer time), the time a person setting a clock would reach;
 * - a wall time that happens twice in autumn (02:30 on the last Sunday of October) takes the first
 *   occurrence (summer time), so a send is never later than the earliest reading of what was asked.
 */
export function parseDelay(value: string, zone: string): number {
  const m = pattern.exec(value);
  if (!m) throw delayError(`delay "${value}" is not in the format Y-m-d H:i:s (e.g. 2026-05-04 14:30:00)`);
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number);
  // Luxon rolls 24:00:00 over to the next day; the format's H is 00-23, so that is an impossible time.
  if (hour > 23 || minute > 59 || second > 59) throw delayError(`delay "${value}" is not a possible time`);
  const local = DateTime.fromObject({ year, month, day, hour, minute, second }, { zone });
  if (!local.isValid) {
    if (local.invalidReason === 'unsupported zone') throw new Error(`unknown time zone ${zone}`);
    throw delayError(`delay "${value}" is not a possible date`);
  }
  // Luxon resolves an ambiguous wall time to one of its offsets; look at the offsets on either side of
  // it and keep the earliest instant that reads as the same wall time.
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  let best = local.toMillis();
  for (const probe of [best - dayMs, best + dayMs]) {
    const offsetMs = DateTime.fromMillis(probe, { zone }).offset * 60_000;
    const candidate = wall - offsetMs;
    const seen = DateTime.fromMillis(candidate, { zone });
    if (
      candidate < best &&
      seen.year === year &&
      seen.month === month &&
      seen.day === day &&
      seen.hour === hour &&
      seen.minute === minute &&
      seen.second === second
    ) {
      best = candidate;
    }
  }
  return best;
}

/** When a campaign is due: the delay if it is in the future, else now (a past delay means "send now"). */
export function dueAt(delay: string | undefined, zone: string, nowMs: number): number {
  if (delay === undefined || delay.trim() === '') return nowMs;
  return Math.max(parseDelay(delay.trim(), zone), nowMs);
}
