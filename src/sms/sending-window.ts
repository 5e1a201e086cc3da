// When marketing messages may go out: configured hours on configured ISO weekdays in the configured time
// zone, except public holidays (French by default). A marketing send due outside the window is deferred to
// the window's next opening, never dropped; alert sends ignore the window.
import { DateTime } from 'luxon';

export type HolidayCalendar = 'FR' | 'none';

export interface SendingWindow {
  zone: string;
  /** Opening and closing wall-clock times, in seconds after local midnight; open ≤ t < close. */
  openSecond: number;
  closeSecond: number;
  /** ISO weekdays (1 = Monday … 7 = Sunday) on which the window opens. */
  days: ReadonlySet<number>;
  holidays: HolidayCalendar;
}

const hoursPattern = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/;
const daysPattern = /^[1-7](-[1-7])?(,[1-7](-[1-7])?)*$/;
/** Far more than any configuration needs to reach an open day (a year of holidays cannot close them all). */
const maxDaysAhead = 400;

/**
 * Reads `MARKETING_HOURS` (`08:00-20:00`; `24:00` closes at midnight), `MARKETING_DAYS` (`1-6`, or a list
 * such as `1-5,7`) and `MARKETING_HOLIDAYS` (`FR` or `none`). Throws naming the variable when one is wrong,
 * so a server never starts with a window that cannot open.
 */
export function parseSendingWindow(config: {
  hours: string;
  days: string;
  holidays: string;
  zone: string;
}): SendingWindow {
  const h = hoursPattern.exec(config.hours.trim());
  if (!h) throw new Error(`MARKETING_HOURS "${config.hours}" must be HH:MM-HH:MM, e.g. 08:00-20:00`);
  const [openHour, openMinute, closeHour, closeMinute] = h.slice(1).map(Number);
  const valid = (hour: number, minute: number, closing: boolean) =>
    minute <= 59 && (hour <= 23 || (closing && hour === 24 && minute === 0));
  if (!valid(openHour, openMinute, false) || !valid(closeHour, closeMinute, true)) {
    throw new Error(`MARKETING_HOURS "${config.hours}" is not a pair of times of day`);
  }
  const openSecond = openHour * 3600 + openMinute * 60;
  const closeSecond = closeHour * 3600 + closeMinute * 60;
  if (openSecond >= closeSecond) {
    throw new Error(`MARKETING_HOURS "${config.hours}" must open before it closes, within one day`);
  }

  const daysText = config.days.replace(/\s+/g, '');
  if (!daysPattern.test(daysText)) {
    throw new Error(`MARKETING_DAYS "${config.days}" must be ISO weekdays 1-7 as ranges or a list, e.g. 1-6`);
  }
  const days = new Set<number>();
  for (const part of daysText.split(',')) {
    const [from, to = from] = part.split('-').map(Number);
    if (from > to) throw new Error(`MARKETING_DAYS "${config.days}": range ${part} runs backwards`);
    for (let d = from; d <= to; d++) days.add(d);
  }

  const holidays = config.holidays.trim();
  if (holidays !== 'FR' && holidays !== 'none') {
    throw new Error(`MARKETING_HOLIDAYS "${config.holidays}" must be FR or none`);
  }
  if (!DateTime.now().setZone(config.zone).isValid)
    throw new Error(`TIMEZONE "${config.zone}" is not a known time zone`);
  return { zone: config.zone, openSecond, closeSecond, days, holidays };
}

/** Easter Sunday of a Gregorian year (anonymous Gregorian algorithm, Meeus/Jones/Butcher), as month and day. */
export function easterSunday(year: number): { month: number; day: number } {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return { month, day };
}

/** The fixed-date public holidays of metropolitan France, as MM-DD. */
const frenchFixedHolidays = new Set(['01-01', '05-01', '05-08', '07-14', '08-15', '11-01', '11-11', '12-25']);
/** Days after Easter Sunday: Easter Monday, Ascension Thursday, Whit Monday. */
const frenchEasterOffsets = [1, 39, 50];

const frenchMovableCache = new Map<number, Set<string>>();

function frenchMovableHolidays(year: number): Set<string> {
  let days = frenchMovableCache.get(year);
  if (!days) {
    const easter = easterSunday(year);
    const sunday = DateTime.utc(year, easter.month, easter.day);
    days = new Set(frenchEasterOffsets.map((offset) => sunday.plus({ days: offset }).toFormat('MM-dd')));
    frenchMovableCache.set(year, days);
  }
  return days;
}

/** Whether a calendar date is a public holiday of the calendar (Alsace-Moselle's extra days are not included). */
export function isHoliday(calendar: HolidayCalendar, year: number, month: number, day: number): boolean {
  if (calendar === 'none') return false;
  const key = `${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  return frenchFixedHolidays.has(key) || frenchMovableHolidays(year).has(key);
}

function isOpenDay(window: SendingWindow, local: DateTime): boolean {
  return window.days.has(local.weekday) && !isHoliday(window.holidays, local.year, local.month, local.day);
}

const secondOfDay = (local: DateTime) =>
  local.hour * 3600 + local.minute * 60 + local.second + local.millisecond / 1000;

/**
 * The first instant of a local day whose wall clock reads `second` or later. Usually that wall time itself;
 * when it falls in a spring-forward gap (a window opening at 02:30 on the last Sunday of March in Paris),
 * the clocks jump past it, and the first such instant is the jump itself (03:00 summer time), not 03:30.
 */
function firstInstantReading(day: DateTime, second: number): number {
  const hour = Math.floor(second / 3600);
  const minute = Math.floor((second % 3600) / 60);
  const at = day.set({ hour, minute, second: second % 60, millisecond: 0 });
  if (at.hour === hour && at.minute === minute) return at.toMillis();
  // Inside the gap: find the jump, the first instant with the later offset, between the two readings.
  let lo = at.toMillis() - 3 * 3_600_000;
  let hi = at.toMillis();
  const laterOffset = DateTime.fromMillis(hi, { zone: day.zone }).offset;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (DateTime.fromMillis(mid, { zone: day.zone }).offset === laterOffset) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * The first instant at or after `instantMs` inside the window: `instantMs` itself when it is inside, else
 * the next opening on an open day. Whether an instant is inside is read on the local wall clock.
 */
export function nextOpening(window: SendingWindow, instantMs: number): number {
  let local = DateTime.fromMillis(instantMs, { zone: window.zone });
  for (let ahead = 0; ahead < maxDaysAhead; ahead++) {
    if (isOpenDay(window, local)) {
      const second = secondOfDay(local);
      if (second >= window.openSecond && second < window.closeSecond) return local.toMillis();
      if (second < window.openSecond) {
        const opening = firstInstantReading(local, window.openSecond);
        if (opening >= local.toMillis()) return opening;
      }
    }
    local = local.startOf('day').plus({ days: 1 });
  }
  throw new Error(`the sending window opens on no day within ${maxDaysAhead} days`);
}
