// The query strings of the reads, checked and parsed before anything is read: each bad value is a -7 naming
// it, its value and the rule. Pure: the time zone and the clock's now are given.
import { getCountries, getCountryCallingCode, isSupportedCountry } from 'libphonenumber-js/max';
import { parseDelay } from '../campaigns/delay.ts';
import { maxInt32, wholeNumberIn } from '../shared/bounds.ts';
import { ApiError } from '../shared/errors.ts';
import { type Page, parsePage } from '../shared/paging.ts';
import { DlrStatus } from '../sms/dlr-status.ts';
import { normalizeNumber } from '../sms/numbers.ts';

type QueryText = string | undefined;

export interface CampaignsQuery {
  start?: string;
  length?: string;
  date_start?: string;
  date_end?: string;
  sms_min?: string;
  sms_max?: string;
  destination?: string;
  text?: string;
  sort?: string;
}

export interface MessagesQuery {
  start?: string;
  length?: string;
  date_start?: string;
  date_end?: string;
  destination?: string;
  message?: string;
  status?: string;
  country?: string;
  sort?: string;
}

export interface RepliesQuery {
  start?: string;
  length?: string;
  date_start?: string;
  date_end?: string;
  sort?: string;
}

export interface CampaignMessagesQuery {
  start?: string;
  length?: string;
  status?: string;
}

export type ClickBucket = 'hour' | 'day';

/** A period, both ends included, in ms. */
export interface Period {
  from: number;
  to: number;
}

export interface Sort<K extends string> {
  key: K;
  descending: boolean;
}

export type CampaignSortKey = (typeof campaignSorts)[number];
export type MessageSortKey = (typeof messageSorts)[number];
export type ReplySortKey = (typeof replySorts)[number];

/** A country filter: its calling code, and the other countries that share it. */
export interface CountryFilter {
  code: string;
  callingCode: string;
  /** Other countries with the same calling code: the number itself tells them apart. */
  sharedWith: string[];
}

/** The longest `text` (GET /campaigns) or `message` (GET /messages) a substring filter takes. */
const maxTextFilter = 160;
/** The period a history read covers when it is given no date, or one of its two. */
const defaultHistoryMs = 24 * 3_600_000;
/** The longest period one history read covers. */
const maxHistoryDays = 31;
const maxHistoryMs = maxHistoryDays * 24 * 3_600_000;
/** The most messages one page of GET /campaign/:ticket/messages answers. */
const maxCampaignMessagesPage = 500;
const clickBuckets: readonly ClickBucket[] = ['hour', 'day'];

const campaignSorts = ['id', 'date', 'text', 'cost', 'status'] as const;
const messageSorts = ['id', 'date', 'destination', 'status'] as const;
const replySorts = ['id', 'date', 'text'] as const;
const dlrCodes = new Set<number>(Object.values(DlrStatus));
const wholeNumber = /^\d+$/;

export const absent = (value: QueryText): value is undefined => value === undefined || value.trim() === '';

/** `sort` in SMSFactor's syntax: one of `keys`, a leading `-` for descending. */
export function parseSort<K extends string>(
  value: QueryText,
  keys: readonly K[],
  fallback: Sort<K>,
): Sort<K> {
  if (absent(value)) return fallback;
  const raw = value.trim();
  const descending = raw.startsWith('-');
  const key = (descending ? raw.slice(1) : raw).toLowerCase() as K;
  if (!keys.includes(key)) {
    throw ApiError.data(
      `sort "${value}" must be one of ${keys.join(', ')}, with a leading - to sort descending (e.g. -${keys[0]})`,
    );
  }
  return { key, descending };
}

/**
 * A count filter: a whole number ≥ 0. The column it filters is a 32-bit integer, which PostgreSQL will not
 * compare with a larger one; above that it is the column's largest value, which filters the same.
 */
export function parseCount(field: string, value: QueryText): number | undefined {
  if (absent(value)) return undefined;
  return wholeNumberIn(field, value.trim(), { min: 0, max: maxInt32, above: 'clamp' });
}

/** A substring filter: trimmed, at most `maxTextFilter` characters; empty is no filter. */
export function parseText(field: string, value: QueryText): string | undefined {
  if (absent(value)) return undefined;
  const text = value.trim();
  const length = [...text].length;
  if (length > maxTextFilter) {
    throw ApiError.data(
      `${field} is ${length} characters long; a ${field} filter holds at most ${maxTextFilter}`,
    );
  }
  return text;
}

/** A number filter, normalized as sends normalize recipients (spaces, a leading + or 00 dropped). */
export function parseDestination(value: QueryText): string | undefined {
  if (absent(value)) return undefined;
  const number = normalizeNumber(value);
  if (number === undefined) {
    throw ApiError.data(
      `destination "${value}" must be a phone number in international format: digits, country code first (e.g. 33612345678)`,
    );
  }
  return number;
}

/** A DLR code filter. */
export function parseStatus(value: QueryText): number | undefined {
  if (absent(value)) return undefined;
  const raw = value.trim();
  if (!wholeNumber.test(raw) || !dlrCodes.has(Number(raw))) {
    throw ApiError.data(`status "${value}" must be a DLR code: ${[...dlrCodes].join(', ')}`);
  }
  return Number(raw);
}

/** Countries by calling code, built at first use: which calling codes several countries share. */
let countriesByCode: Map<string, string[]> | undefined;

export function parseCountry(value: QueryText): CountryFilter | undefined {
  if (absent(value)) return undefined;
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code) || !isSupportedCountry(code)) {
    throw ApiError.data(`country "${value}" must be an ISO 3166-1 alpha-2 country code (e.g. FR)`);
  }
  if (!countriesByCode) {
    countriesByCode = new Map();
    for (const c of getCountries()) {
      const calling = getCountryCallingCode(c);
      countriesByCode.set(calling, [...(countriesByCode.get(calling) ?? []), c]);
    }
  }
  const callingCode = getCountryCallingCode(code);
  const sharedWith = (countriesByCode.get(callingCode) ?? []).filter((c) => c !== code);
  return { code, callingCode, sharedWith };
}

function dateBound(field: string, value: QueryText, timezone: string): number | undefined {
  if (absent(value)) return undefined;
  try {
    return parseDelay(value.trim(), timezone);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw ApiError.data(`${field} "${value}" must be a date as Y-m-d H:i:s (e.g. 2026-05-04 14:30:00)`);
  }
}

/** `date_start` and `date_end`, inclusive; date_end names a second, so all of that second is in. */
export function parseDateRange(query: { date_start?: string; date_end?: string }, timezone: string) {
  const from = dateBound('date_start', query.date_start, timezone);
  const end = dateBound('date_end', query.date_end, timezone);
  if (from !== undefined && end !== undefined && from > end) {
    throw ApiError.data(`date_start "${query.date_start}" is after date_end "${query.date_end}"`);
  }
  return { from, end, to: end === undefined ? undefined : end + 999 };
}

/**
 * The period of a history read: the dates given, at most `maxHistoryDays` apart; a missing end is
 * `defaultHistoryMs` from the other, and without either the period ends `now`.
 */
export function parseHistoryPeriod(
  query: { date_start?: string; date_end?: string },
  timezone: string,
  now: number,
): Period {
  const { from, end } = parseDateRange(query, timezone);
  if (from !== undefined && end !== undefined && end - from > maxHistoryMs) {
    throw ApiError.data(
      `date_start "${query.date_start}" and date_end "${query.date_end}" are more than ${maxHistoryDays} days apart; a history read covers at most ${maxHistoryDays} days`,
    );
  }
  const last = end ?? (from === undefined ? now : from + defaultHistoryMs);
  return { from: from ?? last - defaultHistoryMs, to: last + 999 };
}

/** GET /campaigns: paging, the due-date range, bounds on messages sent, text, a number written to, sort. */
export function parseCampaignsQuery(query: CampaignsQuery, timezone: string) {
  const page = parsePage(query);
  const { from, to } = parseDateRange(query, timezone);
  const sentMin = parseCount('sms_min', query.sms_min);
  const sentMax = parseCount('sms_max', query.sms_max);
  if (sentMin !== undefined && sentMax !== undefined && sentMin > sentMax) {
    throw ApiError.data(`sms_min "${query.sms_min}" is more than sms_max "${query.sms_max}"`);
  }
  const text = parseText('text', query.text);
  const destination = parseDestination(query.destination);
  const sort = parseSort<CampaignSortKey>(query.sort, campaignSorts, { key: 'date', descending: true });
  return { page, filter: { from, to, sentMin, sentMax, text }, destination, sort };
}

/** GET /messages: paging, the period, number, text, DLR code, country, sort. */
export function parseMessagesQuery(query: MessagesQuery, timezone: string, now: number) {
  const page = parsePage(query);
  const period = parseHistoryPeriod(query, timezone, now);
  const destination = parseDestination(query.destination);
  const text = parseText('message', query.message);
  const status = parseStatus(query.status);
  const country = parseCountry(query.country);
  const sort = parseSort<MessageSortKey>(query.sort, messageSorts, { key: 'date', descending: true });
  return { page, period, destination, text, status, country, sort };
}

/** GET /messages/mo: paging, the period, sort. */
export function parseRepliesQuery(query: RepliesQuery, timezone: string, now: number) {
  const page = parsePage(query);
  const period = parseHistoryPeriod(query, timezone, now);
  const sort = parseSort<ReplySortKey>(query.sort, replySorts, { key: 'date', descending: true });
  return { page, period, sort };
}

/** GET /campaign/:ticket/messages: paging (at most `maxCampaignMessagesPage`) and a DLR code. */
export function parseCampaignMessagesQuery(query: CampaignMessagesQuery): { page: Page; status?: number } {
  const start = parsePage({ start: query.start }).start;
  const length = absent(query.length)
    ? parsePage({}).length
    : wholeNumberIn('length', query.length.trim(), { min: 1, max: maxCampaignMessagesPage });
  const status = parseStatus(query.status);
  return { page: { start, length }, status };
}

/** GET /campaign/:ticket/clicks: `hour` (default) or `day`. */
export function parseClickBucket(value: QueryText): ClickBucket {
  const raw = absent(value) ? 'hour' : value.trim().toLowerCase();
  if (!clickBuckets.includes(raw as ClickBucket)) {
    throw ApiError.data(`bucket "${value}" must be one of ${clickBuckets.join(', ')}`);
  }
  return raw as ClickBucket;
}
