// Recipient numbers: international format, digits only, country code first (`33612345678`).
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Strips what clients commonly put around a number (spaces, and a leading `+` or `00`) and returns the
 * digits, or undefined when anything else is left. A single leading 0 is a national format, not accepted.
 */
export function normalizeNumber(raw: string): string | undefined {
  let s = raw.trim();
  if (s.includes(' ')) s = s.replace(/ /g, '');
  if (s.startsWith('+')) s = s.slice(1);
  else if (s.startsWith('00')) s = s.slice(2);
  if (s.length < 6 || s.length > 15 || !/^[1-9][0-9]*$/.test(s)) return undefined;
  return s;
}

export interface NumberCheck {
  valid: boolean;
  /** ISO 3166 country of a valid number, when the numbering plan tells one. */
  country: string | undefined;
}

/**
 * Validates normalized digits against libphonenumber's full ("max") metadata, which knows each country's
 * number ranges, not only lengths: a French 06 number is valid, a French 09 number of the wrong length is
 * not. It costs about 4-5 µs a number, measured in bench/send.bench.ts, within the 100k-recipient budget.
 */
export function checkNumber(digits: string): NumberCheck {
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  if (!parsed?.isValid()) return { valid: false, country: undefined };
  return { valid: true, country: parsed.country };
}

/** Parses ALLOWED_COUNTRIES (`FR,BE,CH`): undefined when unset, meaning every country is allowed. */
export function parseCountries(value: string | undefined): Set<string> | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return new Set(
    value
      .split(',')
      .map((c) => c.trim().toUpperCase())
      .filter((c) => c !== ''),
  );
}
