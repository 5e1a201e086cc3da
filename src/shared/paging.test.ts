import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { parsePage } from './paging.ts';

const refusal = (query: { start?: string; length?: string }) => {
  try {
    parsePage(query);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, details: error.details };
    throw error;
  }
  return undefined;
};

describe('every paged read takes start and length by one set of rules', () => {
  it('start defaults to 0 and length to 100; whole numbers in range are taken as they are', () => {
    expect(parsePage({})).toEqual({ start: 0, length: 100 });
    expect(parsePage({ start: '', length: '' })).toEqual({ start: 0, length: 100 });
    expect(parsePage({ start: '0', length: '1' })).toEqual({ start: 0, length: 1 });
    expect(parsePage({ start: '250', length: '1000' })).toEqual({ start: 250, length: 1000 });
    expect(parsePage({ start: '9007199254740991' })).toEqual({ start: Number.MAX_SAFE_INTEGER, length: 100 });
  });

  it('a start past the largest exact whole number is a -7 naming the bound, never read rounded', () => {
    for (const start of ['9007199254740992', '9007199254740993', '99999999999999999999', '9'.repeat(400)]) {
      expect(refusal({ start })).toEqual({
        status: -7,
        details: `start "${start.length > 40 ? `${start.slice(0, 40)}…` : start}" is past the largest offset a page may start at, 9007199254740991`,
      });
    }
  });

  it('anything else is a -7 naming the field, its value and the rule', () => {
    for (const start of ['-1', 'x', '1.5', '1e2', ' 3', '+3']) {
      expect(refusal({ start })).toEqual({
        status: -7,
        details: `start "${start}" must be a whole number ≥ 0`,
      });
    }
    for (const length of ['0', '1001', '5000', 'x', '-1', '2.0', '1e2']) {
      expect(refusal({ length })).toEqual({
        status: -7,
        details: `length "${length}" must be a whole number from 1 to 1000`,
      });
    }
  });
});
