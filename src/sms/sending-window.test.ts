import { describe, expect, it } from 'vitest';
import { parseDelay } from '../campaigns/delay.ts';
import { easterSunday, isHoliday, nextOpening, parseSendingWindow } from './sending-window.ts';

const paris = 'Europe/Paris';
const defaults = parseSendingWindow({ hours: '08:00-20:00', days: '1-6', holidays: 'FR', zone: paris });
/** An instant given as Paris wall time (the unambiguous readings used here). */
const at = (wall: string) => parseDelay(wall, paris);
const next = (wall: string, window = defaults) => nextOpening(window, at(wall));

describe('sending window', () => {
  it('an instant inside the window is kept as it is, to the millisecond', () => {
    expect(next('2026-01-05 10:00:00')).toBe(at('2026-01-05 10:00:00'));
    expect(nextOpening(defaults, at('2026-01-05 10:00:00') + 123)).toBe(at('2026-01-05 10:00:00') + 123);
    expect(next('2026-01-10 19:59:59')).toBe(at('2026-01-10 19:59:59'));
  });

  it('opens at 08:00 inclusive and closes at 20:00 exclusive', () => {
    expect(next('2026-01-06 07:59:59')).toBe(at('2026-01-06 08:00:00'));
    expect(next('2026-01-06 00:00:00')).toBe(at('2026-01-06 08:00:00'));
    expect(next('2026-01-06 08:00:00')).toBe(at('2026-01-06 08:00:00'));
    expect(next('2026-01-06 20:00:00')).toBe(at('2026-01-07 08:00:00'));
    expect(next('2026-01-06 21:00:00')).toBe(at('2026-01-07 08:00:00'));
  });

  it('Saturday evening and Sunday wait for Monday morning', () => {
    // 2026-01-10 is a Saturday.
    expect(next('2026-01-10 21:00:00')).toBe(Date.UTC(2026, 0, 12, 7, 0, 0));
    expect(next('2026-01-11 00:00:00')).toBe(Date.UTC(2026, 0, 12, 7, 0, 0));
    expect(next('2026-01-11 12:00:00')).toBe(Date.UTC(2026, 0, 12, 7, 0, 0));
    expect(next('2026-01-11 23:59:59')).toBe(Date.UTC(2026, 0, 12, 7, 0, 0));
  });

  it('fixed-date French holidays are closed, even on a Saturday', () => {
    // Christmas 2026 is a Friday: the next opening is Saturday the 26th.
    expect(next('2026-12-25 10:00:00')).toBe(at('2026-12-26 08:00:00'));
    // New Year's Eve after hours: 1 January 2027 (a Friday) is closed.
    expect(next('2026-12-31 20:30:00')).toBe(at('2027-01-02 08:00:00'));
    // 15 August 2026 is a Saturday, then Sunday: Monday the 17th.
    expect(next('2026-08-14 20:00:00')).toBe(at('2026-08-17 08:00:00'));
    // 7 May 2026 evening: 8 May (Friday, Victory in Europe Day) is closed.
    expect(next('2026-05-07 21:00:00')).toBe(at('2026-05-09 08:00:00'));
    for (const [month, day] of [
      [1, 1],
      [5, 1],
      [5, 8],
      [7, 14],
      [8, 15],
      [11, 1],
      [11, 11],
      [12, 25],
    ]) {
      expect(isHoliday('FR', 2031, month, day), `${month}-${day}`).toBe(true);
    }
    expect(isHoliday('FR', 2026, 12, 26)).toBe(false);
    expect(isHoliday('FR', 2026, 5, 2)).toBe(false);
  });

  it('Easter Monday, Ascension and Whit Monday follow Easter each year', () => {
    // Easter 2026 is 5 April: Monday the 6th, Thursday 14 May and Monday 25 May are closed.
    expect(next('2026-04-04 20:00:00')).toBe(at('2026-04-07 08:00:00'));
    expect(next('2026-04-06 09:00:00')).toBe(at('2026-04-07 08:00:00'));
    expect(next('2026-05-14 12:00:00')).toBe(at('2026-05-15 08:00:00'));
    expect(next('2026-05-23 21:00:00')).toBe(at('2026-05-26 08:00:00'));
    // Easter 2027 is 28 March: Monday 29 March is closed, Tuesday opens.
    expect(next('2027-03-29 10:00:00')).toBe(at('2027-03-30 08:00:00'));
    expect(isHoliday('FR', 2027, 5, 6)).toBe(true); // Ascension 2027
    expect(isHoliday('FR', 2027, 5, 17)).toBe(true); // Whit Monday 2027
    expect(isHoliday('FR', 2027, 4, 5)).toBe(false); // Easter Monday 2026's date, not 2027's
  });

  it('computes Easter Sunday rather than knowing a few years', () => {
    const known: [number, number, number][] = [
      [1818, 3, 22], // earliest possible date
      [1943, 4, 25], // latest possible date
      [2000, 4, 23],
      [2019, 4, 21],
      [2024, 3, 31],
      [2025, 4, 20],
      [2026, 4, 5],
      [2027, 3, 28],
      [2038, 4, 25],
      [2285, 3, 22],
    ];
    for (const [year, month, day] of known) expect(easterSunday(year), String(year)).toEqual({ month, day });
  });

  it('MARKETING_HOLIDAYS=none sends on holidays', () => {
    const window = parseSendingWindow({ hours: '08:00-20:00', days: '1-6', holidays: 'none', zone: paris });
    expect(next('2026-12-25 10:00:00', window)).toBe(at('2026-12-25 10:00:00'));
    expect(isHoliday('none', 2026, 12, 25)).toBe(false);
  });

  it('the weekend crossing a change to summer time resumes at 08:00 summer time', () => {
    // Clocks go forward on Sunday 2026-03-29: Saturday is +01:00, Monday +02:00.
    expect(next('2026-03-28 20:30:00')).toBe(Date.UTC(2026, 2, 30, 6, 0, 0));
  });

  it('the weekend crossing a change to winter time resumes at 08:00 winter time', () => {
    // Clocks go back on Sunday 2026-10-25: Saturday is +02:00, Monday +01:00.
    expect(next('2026-10-24 21:00:00')).toBe(Date.UTC(2026, 9, 26, 7, 0, 0));
  });

  it('an opening inside the spring-forward gap is the jump itself, the first instant reading that late', () => {
    const window = parseSendingWindow({ hours: '02:30-20:00', days: '1-7', holidays: 'none', zone: paris });
    // 02:30 does not exist on 2026-03-29; at 01:00 UTC the clock jumps from 02:00 to 03:00.
    expect(nextOpening(window, Date.UTC(2026, 2, 29, 0, 0, 0))).toBe(Date.UTC(2026, 2, 29, 1, 0, 0));
    expect(nextOpening(window, Date.UTC(2026, 2, 29, 0, 59, 59))).toBe(Date.UTC(2026, 2, 29, 1, 0, 0));
    // After the jump the wall clock reads 03:00 or later: inside.
    expect(nextOpening(window, Date.UTC(2026, 2, 29, 1, 0, 0))).toBe(Date.UTC(2026, 2, 29, 1, 0, 0));
  });

  it('an opening inside the repeated autumn hour is read on the wall clock of each pass', () => {
    const window = parseSendingWindow({ hours: '02:30-20:00', days: '1-7', holidays: 'none', zone: paris });
    // 02:10 summer time (first pass) waits for 02:30 summer time; 02:10 winter time for 02:30 winter time.
    expect(nextOpening(window, Date.UTC(2026, 9, 25, 0, 10, 0))).toBe(Date.UTC(2026, 9, 25, 0, 30, 0));
    expect(nextOpening(window, Date.UTC(2026, 9, 25, 1, 10, 0))).toBe(Date.UTC(2026, 9, 25, 1, 30, 0));
  });

  it('a delay that lands outside the window is deferred to the next opening', () => {
    // Asked for Sunday 2026-06-07 at 10:00: sent Monday at 08:00 summer time.
    expect(nextOpening(defaults, parseDelay('2026-06-07 10:00:00', paris))).toBe(
      Date.UTC(2026, 5, 8, 6, 0, 0),
    );
    // Asked for a weekday at 22:00: sent the next morning.
    expect(nextOpening(defaults, parseDelay('2026-06-09 22:00:00', paris))).toBe(
      Date.UTC(2026, 5, 10, 6, 0, 0),
    );
  });

  it('days, hours and another zone come from configuration', () => {
    const weekdays = parseSendingWindow({
      hours: '09:30-17:00',
      days: '1-5',
      holidays: 'none',
      zone: 'America/New_York',
    });
    // Friday 2026-01-09 17:00 in New York (22:00 UTC) is after hours: Monday 09:30 (14:30 UTC).
    expect(nextOpening(weekdays, Date.UTC(2026, 0, 9, 22, 0, 0))).toBe(Date.UTC(2026, 0, 12, 14, 30, 0));
    const lists = parseSendingWindow({
      hours: '00:00-24:00',
      days: '1,3 , 5-7',
      holidays: 'none',
      zone: paris,
    });
    expect([...lists.days].sort()).toEqual([1, 3, 5, 6, 7]);
    // Open all day: Tuesday waits for Wednesday midnight.
    expect(next('2026-01-06 12:00:00', lists)).toBe(at('2026-01-07 00:00:00'));
    expect(next('2026-01-07 23:59:59', lists)).toBe(at('2026-01-07 23:59:59'));
  });

  it('a window that cannot be read is refused naming the variable', () => {
    const parse =
      (hours: string, days = '1-6', holidays = 'FR', zone = paris) =>
      () =>
        parseSendingWindow({ hours, days, holidays, zone });
    expect(parse('8-20')).toThrow(/MARKETING_HOURS "8-20" must be HH:MM-HH:MM/);
    expect(parse('20:00-08:00')).toThrow(/must open before it closes/);
    expect(parse('08:00-08:00')).toThrow(/must open before it closes/);
    expect(parse('08:60-20:00')).toThrow(/not a pair of times/);
    expect(parse('24:00-24:00')).toThrow(/not a pair of times/);
    expect(parse('08:00-24:30')).toThrow(/not a pair of times/);
    expect(parse('08:00-20:00', '0-6')).toThrow(/MARKETING_DAYS "0-6"/);
    expect(parse('08:00-20:00', '6-1')).toThrow(/runs backwards/);
    expect(parse('08:00-20:00', '')).toThrow(/MARKETING_DAYS/);
    expect(parse('08:00-20:00', '1-6', 'DE')).toThrow(/MARKETING_HOLIDAYS "DE" must be FR or none/);
    expect(parse('08:00-20:00', '1-6', 'FR', 'Mars/Olympus')).toThrow(
      /TIMEZONE "Mars\/Olympus" is not a known time zone/,
    );
  });
});
