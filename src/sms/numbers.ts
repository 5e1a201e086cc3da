// Recipient numbers: international format, digits only, country code first (`33612345678`).
import { getCountries, getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';

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

/** Countries by calling code ('33' → FR; '1' → US, CA and the other NANP countries), built at first use. */
let byCallingCode: Map<string, string[]> | undefined;

function countriesByCallingCode(): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const country of getCountries()) {
    const code = getCountryCallingCode(country);
    const list = map.get(code);
    if (list) list.push(country);
    else map.set(code, [country]);
  }
  return map;
}

/**
 * The country of a number already validated (a stored recipient), as `checkNumber` tells it, on every receipt:
 * where its calling code belongs to one country alone (33, 32, 41…) that is the answer without parsing;
 * shared codes (1, 7, 44, 262…) need the number's ranges, so the full check. Calling codes are prefix-free,
 * so the first of the 1-, 2- and 3-digit prefixes that is one is the number's.
 */
export function countryOf(digits: string): string | undefined {
  byCallingCode ??= countriesByCallingCode();
  for (let length = 1; length <= 3; length++) {
    const countries = byCallingCode.get(digits.slice(0, length));
    if (countries) return countries.length === 1 ? countries[0] : checkNumber(digits).country;
  }
  return undefined;
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
