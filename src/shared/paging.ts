// One set of paging rules for every paged read (campaigns, their replies and NPAI numbers, lists, the
// blacklist and NPAI lists, a webhook's attempts), so a client learns them once.
import Type from 'typebox';
import { wholeNumberIn } from './bounds.ts';
import { ApiError } from './errors.ts';

/** The query of a paged read; both fields are optional and come as text. */
export const PageQuery = Type.Object({
  start: Type.Optional(Type.String()),
  length: Type.Optional(Type.String()),
});

export interface Page {
  /** Rows to skip. */
  start: number;
  /** Rows to answer at most. */
  length: number;
}

const defaultPageLength = 100;
const maxPageLength = 1000;

/**
 * The largest offset a page may start at: the largest whole number JavaScript holds exactly. No table comes
 * near it, so no real page is refused, and both databases take it as an OFFSET (a 64-bit integer); a larger
 * start would be read rounded (99999999999999999999 as 1e20), an offset nobody sent, so it is a -7.
 */
export const maxPageStart = Number.MAX_SAFE_INTEGER;

const absent = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

/** A client's value as a -7 quotes it: short, whatever was sent. */
const quoted = (raw: string) => (raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);

function pageStart(raw: string): number {
  // Clamped only to tell the two refusals apart: a start that is not a whole number ≥ 0 says so, one past
  // the bound names the bound.
  const start = wholeNumberIn('start', raw, { min: 0, max: maxPageStart, above: 'clamp' });
  if (start === maxPageStart && Number(raw) > maxPageStart) {
    throw ApiError.data(
      `start "${quoted(raw)}" is past the largest offset a page may start at, ${maxPageStart}`,
    );
  }
  return start;
}

/**
 * `start`: a whole number from 0 to `maxPageStart`, 0 when absent (a start past every row answers an empty
 * page); `length`: a whole number from 1 to 1000, 100 when absent. Anything else is a -7 naming the field,
 * its value and the rule.
 */
export function parsePage(query: { start?: string; length?: string }): Page {
  const { start, length } = query;
  return {
    start: absent(start) ? 0 : pageStart(start),
    length: absent(length)
      ? defaultPageLength
      : wholeNumberIn('length', length, { min: 1, max: maxPageLength }),
  };
}
