// A day given as `Y-m-d`, read in the configured time zone, as the reads over a period take it
// (GET /metrics/consumption, GET /audit).
import { DateTime } from 'luxon';
import { ApiError } from './errors.ts';

const dayPattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The start of a `Y-m-d` day in `timezone`, or undefined when absent; -7 for anything else, naming the field. */
export function parseDay(field: string, value: string | undefined, timezone: string): DateTime | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const m = dayPattern.exec(value.trim());
  const day = m
    ? DateTime.fromObject({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) }, { zone: timezone })
    : undefined;
  if (!day?.isValid) {
    throw ApiError.data(`${field} "${value}" must be a date in the format Y-m-d (e.g. 2026-01-31)`);
  }
  return day.startOf('day');
}
