// One set of paging rules for every paged read (campaigns, their replies and NPAI numbers, lists, the
// blacklist and NPAI lists, a webhook's attempts), so a client learns them once.
import Type from 'typebox';
import { wholeNumberIn } from './bounds.ts';

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

const absent = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

/**
 * `start`: a whole number ≥ 0, 0 when absent; `length`: a whole number from 1 to 1000, 100 when absent.
 * Anything else is a -7 naming the field, its value and the rule. A start past every row answers an empty
 * page, whatever its size (API.md: it is an offset), so one beyond the largest safe integer is that one:
 * both databases take it.
 */
export function parsePage(query: { start?: string; length?: string }): Page {
  const { start, length } = query;
  return {
    start: absent(start)
      ? 0
      : wholeNumberIn('start', start, { min: 0, max: Number.MAX_SAFE_INTEGER, above: 'clamp' }),
    length: absent(length)
      ? defaultPageLength
      : wholeNumberIn('length', length, { min: 1, max: maxPageLength }),
  };
}
