// A price list in memory: what one SMS part costs, in whole credits, per destination. A number is priced by
// the longest prefix of its E.164 digits the list names, else by its country, else by the list's default
// (`*`, or one credit when the list has none). Pure: parsed once per account and memory, asked per recipient.
import { getCountries, isSupportedCountry } from 'libphonenumber-js/max';
import { ApiError } from '../shared/errors.ts';

/** One line of a price list: `FR`, `3367` or `*` (every destination it does not name), and its price. */
export interface PriceEntry {
  destination: string;
  credits: number;
}

/** What a destination the lists do not name costs: one credit, as every SMS part did before prices. */
export const defaultPartCredits = 1;
/** The highest price of one SMS part: a typo of a few zeros is refused rather than charged. */
export const maxPartCredits = 100_000;
/** The destination of a list's default price. */
export const anyDestination = '*';

export interface PriceTable {
  /** No list names anything: every part costs `defaultPartCredits`, and the send path asks nothing. */
  readonly flat: boolean;
  /** The price of one part to `number` (E.164 digits), whose country is `country` (undefined: none known). */
  priceOf(number: string, country: string | undefined): number;
  /** The entries it was made of, sorted: `*` first, then countries, then prefixes. */
  readonly entries: readonly PriceEntry[];
  /** What a destination it does not name costs. */
  readonly fallback: number;
}

const prefixPattern = /^\d{1,15}$/;
const countryPattern = /^[A-Z]{2}$/;

/** `FR`, `3367` (a leading `+` or `00` dropped) or `*`, or undefined when it is none of these. */
export function normalizeDestination(raw: string): string | undefined {
  const value = raw.trim().toUpperCase();
  if (value === anyDestination) return value;
  if (countryPattern.test(value)) return isSupportedCountry(value) ? value : undefined;
  const digits = value.replace(/^\+|^00/, '');
  return prefixPattern.test(digits) ? digits : undefined;
}

const isPrefix = (destination: string) => destination.charCodeAt(0) <= 57;

/** Merges lists, each later one replacing the earlier ones' entries it names (instance, parent, …, account). */
export function mergeEntries(levels: readonly (readonly PriceEntry[])[]): PriceEntry[] {
  const merged = new Map<string, number>();
  for (const level of levels) for (const e of level) merged.set(e.destination, e.credits);
  const rank = (d: string) => (d === anyDestination ? 0 : isPrefix(d) ? 2 : 1);
  return [...merged]
    .map(([destination, credits]) => ({ destination, credits }))
    .sort((a, b) => rank(a.destination) - rank(b.destination) || a.destination.localeCompare(b.destination));
}

export function compilePriceTable(entries: readonly PriceEntry[]): PriceTable {
  const prefixes = new Map<string, number>();
  const countries = new Map<string, number>();
  let fallback = defaultPartCredits;
  let longest = 0;
  for (const { destination, credits } of entries) {
    if (destination === anyDestination) fallback = credits;
    else if (isPrefix(destination)) {
      prefixes.set(destination, credits);
      longest = Math.max(longest, destination.length);
    } else countries.set(destination, credits);
  }
  const flat = entries.length === 0;
  return {
    flat,
    fallback,
    entries,
    priceOf(number, country) {
      // The longest prefix first: a prefix names a range finer than any country.
      for (let length = Math.min(longest, number.length); length > 0; length--) {
        const price = prefixes.get(number.slice(0, length));
        if (price !== undefined) return price;
      }
      if (country !== undefined) {
        const price = countries.get(country);
        if (price !== undefined) return price;
      }
      return fallback;
    },
  };
}

/** What each country costs (by its country entry or the default), for the account's own read. */
export function pricesByCountry(table: PriceTable): Record<string, number> {
  const named = new Map(table.entries.map((e) => [e.destination, e.credits]));
  const byCountry: Record<string, number> = {};
  for (const country of getCountries()) byCountry[country] = named.get(country) ?? table.fallback;
  return byCountry;
}

/**
 * A price list as the operator writes it: one `country_or_prefix,credits` line each (a header line, blank
 * lines and `#` comments are skipped). Every broken line is named in one -7, so a file is fixed in one pass.
 */
export function parsePriceList(text: string): PriceEntry[] {
  const entries: PriceEntry[] = [];
  const seen = new Map<string, number>();
  const errors: string[] = [];
  const lines = text.split(/\r?\n/);
  let first = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const lineNo = i + 1;
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/[,;]/).map((f) => f.trim());
    // A header (`country_or_prefix,credits`): words where the first line's price would be.
    const header =
      first && /^[a-z_ ]+$/i.test(fields[1] ?? '') && normalizeDestination(fields[0]) === undefined;
    first = false;
    if (header) continue;
    if (fields.length !== 2) {
      errors.push(`line ${lineNo} "${line}": expected country_or_prefix,credits`);
      continue;
    }
    const destination = normalizeDestination(fields[0]);
    if (destination === undefined) {
      errors.push(
        `line ${lineNo}: "${fields[0]}" is neither an ISO 3166-1 alpha-2 country, an E.164 prefix of 1 to 15 digits nor *`,
      );
      continue;
    }
    if (!/^\d{1,6}$/.test(fields[1]) || Number(fields[1]) > maxPartCredits) {
      errors.push(
        `line ${lineNo}: credits "${fields[1]}" must be a whole number of credits per SMS part from 0 to ${maxPartCredits}`,
      );
      continue;
    }
    const earlier = seen.get(destination);
    if (earlier !== undefined) {
      errors.push(`line ${lineNo}: ${destination} is already priced on line ${earlier}`);
      continue;
    }
    seen.set(destination, lineNo);
    entries.push({ destination, credits: Number(fields[1]) });
  }
  if (errors.length > 0) throw ApiError.data(`the price list has errors: ${errors.join('; ')}`);
  if (entries.length === 0) {
    throw ApiError.data('the price list names no destination: give country_or_prefix,credits lines');
  }
  return entries;
}
