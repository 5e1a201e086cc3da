// Which recipients of a send are kept, and why the others are not. Each recipient given lands in exactly
// one bucket, checked in this order: invalid, duplicated, not_allowed, blacklisted, npai, else sent; so
// total = sent + the five counts.
import { checkNumber, normalizeNumber } from '../sms/numbers.ts';
import type { CampaignsTable } from '../store/schema.ts';

/** The counters a campaign keeps of its recipients. */
export type FilterCounts = Pick<
  CampaignsTable,
  'total' | 'sent' | 'blacklisted' | 'duplicated' | 'invalid' | 'npai' | 'not_allowed'
>;

export interface Candidate<T> {
  /** The number as given. */
  raw: string;
  /** What the caller carries along with it (gsmsmsid, contact). */
  item: T;
}

export interface Kept<T> {
  number: string;
  /** Its ISO alpha-2 country, as the numbering plan told it (undefined: none), for its price. */
  country: string | undefined;
  item: T;
}

/** Why a recipient was not kept: the counter it landed in. */
export type FilterReason = Exclude<keyof FilterCounts, 'total' | 'sent'>;

/** Tells which of up to `chunk` numbers are blacklisted or NPAI for the account. */
export type ListedLookup = (numbers: string[]) => Promise<{ number: string; list: string }[]>;

export async function filterRecipients<T>(
  candidates: Iterable<Candidate<T>>,
  options: {
    allowedCountries: Set<string> | undefined;
    /**
     * Whether a delivery route takes the number (CONNECTORS_FILE); a number no route takes is counted in
     * `not_allowed` like a country not allowed, and is neither sent nor charged. Absent: every number is.
     */
    routable?: (number: string, country: string | undefined) => boolean;
    lookup: ListedLookup;
    chunk: number;
    /** Whether the account has any listed number at all: lets a large send skip its chunked lookups. */
    anyListed: () => Promise<boolean>;
    /** Told of each recipient not kept, as given, and why (an SMPP submit_multi answers them one by one). */
    rejected?: (raw: string, reason: FilterReason) => void;
  },
): Promise<{ kept: Kept<T>[]; counts: FilterCounts }> {
  const counts: FilterCounts = {
    total: 0,
    sent: 0,
    blacklisted: 0,
    duplicated: 0,
    invalid: 0,
    npai: 0,
    not_allowed: 0,
  };
  const { allowedCountries } = options;
  const reject = (raw: string, reason: FilterReason) => {
    counts[reason]++;
    options.rejected?.(raw, reason);
  };
  // Verdict per normalized number, so a repeat is neither validated again nor counted twice as invalid.
  const seen = new Map<string, boolean>();
  const allowed: Kept<T>[] = [];
  /** The numbers of `allowed` as given, kept only for `rejected`. */
  const allowedRaw: string[] = [];
  for (const { raw, item } of candidates) {
    counts.total++;
    const number = normalizeNumber(raw);
    if (number === undefined) {
      reject(raw, 'invalid');
      continue;
    }
    const verdict = seen.get(number);
    if (verdict !== undefined) {
      reject(raw, verdict ? 'duplicated' : 'invalid');
      continue;
    }
    const check = checkNumber(number);
    seen.set(number, check.valid);
    if (!check.valid) {
      reject(raw, 'invalid');
      continue;
    }
    if (allowedCountries && (check.country === undefined || !allowedCountries.has(check.country))) {
      reject(raw, 'not_allowed');
      continue;
    }
    if (options.routable && !options.routable(number, check.country)) {
      reject(raw, 'not_allowed');
      continue;
    }
    allowed.push({ number, country: check.country, item });
    if (options.rejected) allowedRaw.push(raw);
  }
  seen.clear();

  // Blacklist and NPAI are read for the surviving numbers only, a chunk per query, never the whole list.
  const listed = new Map<string, string>();
  const lookups = allowed.length <= options.chunk || (await options.anyListed());
  for (let i = 0; lookups && i < allowed.length; i += options.chunk) {
    const numbers = allowed.slice(i, i + options.chunk).map((k) => k.number);
    for (const row of await options.lookup(numbers)) {
      // A number on both lists counts as blacklisted: the stronger reason not to send.
      if (listed.get(row.number) !== 'blacklist') listed.set(row.number, row.list);
    }
  }
  if (listed.size === 0) {
    counts.sent = allowed.length;
    return { kept: allowed, counts };
  }
  const kept: Kept<T>[] = [];
  for (const [i, k] of allowed.entries()) {
    const list = listed.get(k.number);
    if (list === 'blacklist') reject(allowedRaw[i] ?? k.number, 'blacklisted');
    else if (list === 'npai') reject(allowedRaw[i] ?? k.number, 'npai');
    else kept.push(k);
  }
  counts.sent = kept.length;
  return { kept, counts };
}
