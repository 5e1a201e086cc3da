// One set of paging rules for every paged read (campaigns, their replies and NPAI numbers, lists, the
// blacklist and NPAI lists, a webhook's attempts), so a client learns them once.
import Type from 'typebox';
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

const wholeNumber = /^\d+$/;
const absent = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

/**
 * `start`: a whole number ≥ 0, 0 when absent; `length`: a whole number from 1 to 1000, 100 when absent.
 * Anything else is a -7 naming the field, its value and the rule.
 */
export function parsePage(query: { start?: string; length?: string }): Page {
  const { start, length } = query;
  if (!absent(start) && !wholeNumber.test(start)) {
    throw ApiError.data(`start "${start}" must be a whole number ≥ 0`);
  }
  const n = absent(length) ? defaultPageLength : wholeNumber.test(length) ? Number(length) : Number.NaN;
  if (!(n >= 1 && n <= maxPageLength)) {
    throw ApiError.data(`length "${length}" must be a whole number from 1 to ${maxPageLength}`);
  }
  return {
    // A start past every row answers an empty page; beyond the largest safe integer it is that one.
    start: absent(start) ? 0 : Math.min(Number(start), Number.MAX_SAFE_INTEGER),
    length: n,
  };
}
