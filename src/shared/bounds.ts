// Every number and flag a client sends is read through these, so none reaches a query, a date or a String()
// unbounded: a huge offset, a ttl past the last representable date or an object where a number belongs is a
// -7 naming the field, never a database error or a 500.
import { ApiError } from './errors.ts';

/** The largest value of a 32-bit integer column (PostgreSQL `integer`, SQLite compares it the same). */
export const maxInt32 = 2_147_483_647;

const wholeNumber = /^\d+$/;

export interface WholeNumberRule {
  min: number;
  max: number;
  /**
   * What a whole number above `max` becomes: refused (the default), or `max` itself where that answers the
   * same (a count filter above any count a column holds, an offset past every row).
   */
  above?: 'refuse' | 'clamp';
  /** How the rule reads in the -7, when the range alone does not say it (`a number of seconds`). */
  unit?: string;
}

/**
 * A whole number given as digits (a query, an XML value) or as a JSON number. Anything else (a sign, a
 * fraction, an exponent, an object, a value out of the rule's range) is a -7 naming the field, the value
 * and the rule.
 */
export function wholeNumberIn(field: string, value: unknown, rule: WholeNumberRule): number {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value;
  const unit = rule.unit ? ` ${rule.unit}` : '';
  // A clamped rule takes any whole number from its minimum up, so that is all the -7 needs to say.
  const range = rule.above === 'clamp' ? `≥ ${rule.min}` : `from ${rule.min} to ${rule.max}`;
  const refuse = () => ApiError.data(`${field} "${shown(value)}" must be a whole number${unit} ${range}`);
  if (typeof text !== 'string' || !wholeNumber.test(text)) throw refuse();
  const n = Number(text);
  if (n < rule.min) throw refuse();
  if (n > rule.max) {
    if (rule.above === 'clamp') return rule.max;
    throw refuse();
  }
  return n;
}

/**
 * A field that must be text: a string, or a number as JSON clients write flags and counts. An object, an
 * array or a boolean is a -7 rather than `[object Object]` (or a TypeError from an object whose toString is
 * not a function).
 */
export function scalarText(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw ApiError.data(`${field} must be a string or a number, not ${kindOf(value)}`);
}

const kindOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`;

/** A value as a -7 quotes it: short, and never by calling a client-supplied toString. */
function shown(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `${value.slice(0, 40)}…` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return kindOf(value);
}
