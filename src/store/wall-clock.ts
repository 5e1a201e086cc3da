// Grouping rows by hour or day of a time zone's wall clock, in SQL, the same on SQLite and PostgreSQL. A row's
// wall time is its instant plus the zone's offset at that instant; the offset changes only at the zone's
// transitions (daylight saving time), which are found here for the period read and written into the query as
// a CASE over literals. So a day starts at local midnight in summer and in winter alike, and the database
// needs no time zone data of its own.

import { type RawBuilder, sql } from 'kysely';
import { IANAZone } from 'luxon';

export type BucketSize = 'hour' | 'day';

const sizeMs: Record<BucketSize, number> = { hour: 3_600_000, day: 86_400_000 };
/** Offsets change at most once a day in every zone of the tz database: a day's step finds each change. */
const scanStepMs = 86_400_000;

interface OffsetSpan {
  /** The first instant of the next span (exclusive end); undefined for the last span. */
  until: number | undefined;
  offsetMs: number;
}

/** The zone's offsets over [from, to]: one span per offset, in order. */
export function offsetSpans(zone: string, from: number, to: number): OffsetSpan[] {
  const z = IANAZone.create(zone);
  const offsetAt = (ms: number) => z.offset(ms) * 60_000;
  const spans: OffsetSpan[] = [];
  let current = offsetAt(from);
  for (let at = from; at < to; ) {
    const next = Math.min(at + scanStepMs, to);
    if (offsetAt(next) !== current) {
      // The change lies in (at, next]: the first millisecond with the new offset, by bisection.
      let low = at;
      let high = next;
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        if (offsetAt(middle) === current) low = middle;
        else high = middle;
      }
      spans.push({ until: high, offsetMs: current });
      current = offsetAt(high);
      at = high;
    } else {
      at = next;
    }
  }
  spans.push({ until: undefined, offsetMs: current });
  return spans;
}

/**
 * The start of the wall-clock hour or day of `column` (epoch ms) in `zone`, as wall-clock milliseconds (the
 * wall time read as if it were UTC; `wallLabel` writes it out), for rows whose `column` lies in [from, to].
 * Integer division floors, every operand being positive past 1970. A wall-clock hour that occurs twice (the
 * autumn change) is one bucket.
 */
export function wallClockBucket(
  column: string,
  zone: string,
  size: BucketSize,
  from: number,
  to: number,
): RawBuilder<number> {
  const ref = sql.ref(column);
  const spans = offsetSpans(zone, from, to);
  const offset =
    spans.length === 1
      ? sql.lit(spans[0].offsetMs)
      : sql`(case ${sql.join(
          spans
            .filter((s) => s.until !== undefined)
            .map((s) => sql`when ${ref} < ${sql.lit(s.until)} then ${sql.lit(s.offsetMs)}`),
          sql` `,
        )} else ${sql.lit(spans[spans.length - 1].offsetMs)} end)`;
  const bucket = sql.lit(sizeMs[size]);
  return sql<number>`(((${ref} + ${offset}) / ${bucket}) * ${bucket})`;
}

/** A bucket of `wallClockBucket` as the API writes dates: `Y-m-d H:i:s`, or `Y-m-d` for a day. */
export function wallLabel(wallMs: number, form: 'date' | 'dateTime'): string {
  const iso = new Date(wallMs).toISOString();
  return form === 'date' ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}
