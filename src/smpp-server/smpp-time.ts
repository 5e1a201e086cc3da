// SMPP 3.4's time format (7.1.1): `YYMMDDhhmmsstnnp`, 16 characters. `p` '+' or '-' makes it an absolute time,
// `nn` quarter hours ahead of (or behind) UTC; `p` 'R' makes it relative to now, `YY` years to `ss` seconds
// on. An empty string is no time.
import { DateTime } from 'luxon';

const pattern = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d)(\d{2})([+\-R])$/;

/** A time as SMPP's absolute format, in UTC: YYMMDDhhmmss, tenths, `00+`. */
export function smppAbsoluteTime(ms: number): string {
  const utc = DateTime.fromMillis(ms, { zone: 'utc' });
  return `${utc.toFormat('yyMMddHHmmss')}${Math.floor(utc.millisecond / 100)}00+`;
}

/** The instant (ms since the epoch) an SMPP time names, `now` the base of a relative one; undefined if invalid. */
export function parseSmppTime(value: string, now: number): number | undefined {
  const m = pattern.exec(value);
  if (!m) return undefined;
  const [yy, mo, dd, hh, mi, ss, tenths, quarters] = m.slice(1, 9).map(Number);
  if (m[9] === 'R') {
    if (tenths !== 0 || quarters !== 0) return undefined;
    return DateTime.fromMillis(now, { zone: 'utc' })
      .plus({ years: yy, months: mo, days: dd, hours: hh, minutes: mi, seconds: ss })
      .toMillis();
  }
  // Absolute: years 00-99 are 2000-2099 (SMPP 3.4 predates any other reading that matters now).
  if (quarters > 48) return undefined;
  const local = DateTime.fromObject(
    { year: 2000 + yy, month: mo, day: dd, hour: hh, minute: mi, second: ss, millisecond: tenths * 100 },
    { zone: 'utc' },
  );
  if (!local.isValid || hh > 23 || mi > 59 || ss > 59) return undefined;
  const offsetMs = quarters * 15 * 60_000 * (m[9] === '+' ? 1 : -1);
  return local.toMillis() - offsetMs;
}
