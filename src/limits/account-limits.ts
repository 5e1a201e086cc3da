// What an account's limits are, and whose: its own values (account_limits), else its parent's, else the
// instance's defaults (the environment). Pure: the operator's input parsed and checked, limits resolved.
import { isSupportedCountry } from 'libphonenumber-js/max';
import type { Config } from '../config.ts';
import { ApiError } from '../shared/errors.ts';

/** The limits an account may have of its own; null in a row: inherited. */
export interface OwnLimits {
  daily_messages: number | null;
  monthly_messages: number | null;
  requests_per_second: number | null;
  parts_per_second: number | null;
  /** `FR,BE`, or `*` for every country. */
  countries: string | null;
}

export type LimitName = keyof OwnLimits;
export const limitNames: readonly LimitName[] = [
  'daily_messages',
  'monthly_messages',
  'requests_per_second',
  'parts_per_second',
  'countries',
];

/** Whose value applies: the account's own, its parent's, or the instance's environment default. */
export type LimitSource = 'account' | 'parent' | 'instance';

export interface Resolved<T> {
  value: T;
  from: LimitSource;
}

/** An account's effective limits. Numbers: 0 is no limit. Countries: null is every country. */
export interface EffectiveLimits {
  accountId: number;
  parentId: number | null;
  daily_messages: Resolved<number>;
  monthly_messages: Resolved<number>;
  requests_per_second: Resolved<number>;
  parts_per_second: Resolved<number>;
  countries: Resolved<readonly string[] | null>;
}

export type InstanceLimits = Pick<
  Config,
  | 'DAILY_MESSAGE_LIMIT'
  | 'MONTHLY_MESSAGE_LIMIT'
  | 'RATE_LIMIT_TOKEN_RPS'
  | 'PARTS_PER_SECOND_LIMIT'
  | 'ALLOWED_COUNTRIES'
>;

/** The environment variable each limit's instance default comes from. */
export const instanceVariable: Record<LimitName, keyof InstanceLimits> = {
  daily_messages: 'DAILY_MESSAGE_LIMIT',
  monthly_messages: 'MONTHLY_MESSAGE_LIMIT',
  requests_per_second: 'RATE_LIMIT_TOKEN_RPS',
  parts_per_second: 'PARTS_PER_SECOND_LIMIT',
  countries: 'ALLOWED_COUNTRIES',
};

/** The most each number may be set to (as their environment variables'). */
const maxima: Record<Exclude<LimitName, 'countries'>, number> = {
  daily_messages: 1_000_000_000,
  monthly_messages: 1_000_000_000,
  requests_per_second: 1_000_000,
  parts_per_second: 1_000_000,
};

/** A countries value as stored (`FR,BE` or `*`) as a list; null: every country. */
export function countryList(value: string | null | undefined): string[] | null {
  if (value === null || value === undefined || value.trim() === '' || value.trim() === '*') return null;
  return value
    .split(',')
    .map((c) => c.trim().toUpperCase())
    .filter((c) => c !== '');
}

/**
 * The effective limits of an account from its own row and its parent's (either absent): each limit is the
 * account's value when it has one, else its parent's, else the instance's.
 */
export function resolveLimits(
  account: { accountId: number; parentId: number | null },
  own: OwnLimits | undefined,
  parent: OwnLimits | undefined,
  instance: InstanceLimits,
): EffectiveLimits {
  function pick<T>(name: LimitName, instanceValue: T, read: (raw: number | string) => T): Resolved<T> {
    const mine = own?.[name];
    if (mine !== null && mine !== undefined) return { value: read(mine), from: 'account' };
    const theirs = parent?.[name];
    if (theirs !== null && theirs !== undefined) return { value: read(theirs), from: 'parent' };
    return { value: instanceValue, from: 'instance' };
  }
  return {
    ...account,
    daily_messages: pick('daily_messages', instance.DAILY_MESSAGE_LIMIT, Number),
    monthly_messages: pick('monthly_messages', instance.MONTHLY_MESSAGE_LIMIT, Number),
    requests_per_second: pick('requests_per_second', instance.RATE_LIMIT_TOKEN_RPS, Number),
    parts_per_second: pick('parts_per_second', instance.PARTS_PER_SECOND_LIMIT, Number),
    countries: pick('countries', countryList(instance.ALLOWED_COUNTRIES), (raw) => countryList(String(raw))),
  };
}

/** How a refusal names a limit: the environment variable, or whose setting it is. */
export function limitLabel(limits: EffectiveLimits, name: LimitName, what: string): string {
  const { from } = limits[name];
  if (from === 'instance') return instanceVariable[name];
  if (from === 'account') return `the ${what} limit of account ${limits.accountId} (pigeon account limits)`;
  return `the ${what} limit of account ${limits.parentId}, parent of account ${limits.accountId} (pigeon account limits)`;
}

/**
 * The operator's change of an account's limits, checked: each value given is a whole number within its range
 * (0: no limit), `inherit` (the account inherits it again), or for countries a list of ISO codes or `all`.
 * Every bad value is named in one -7.
 */
export function parseLimitChange(input: Partial<Record<LimitName, unknown>>): Partial<OwnLimits> {
  const change: Partial<OwnLimits> = {};
  const errors: string[] = [];
  for (const name of limitNames) {
    const raw = input[name];
    if (raw === undefined) continue;
    const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
    if (text === 'inherit' || raw === null) {
      change[name] = null;
      continue;
    }
    if (name === 'countries') {
      const countries = text === undefined ? undefined : parseCountryList(text);
      if (typeof countries === 'string') change.countries = countries;
      else
        errors.push(
          `countries "${String(raw)}" must be ISO country codes separated by commas (FR,BE), all, or inherit${countries ? `: ${countries.error}` : ''}`,
        );
      continue;
    }
    const max = maxima[name];
    if (text === undefined || !/^\d+$/.test(text) || Number(text) > max) {
      errors.push(`${name} "${String(raw)}" must be a whole number from 0 (no limit) to ${max}, or inherit`);
      continue;
    }
    change[name] = Number(text);
  }
  if (errors.length > 0) throw ApiError.data(errors.join('; '));
  return change;
}

/** `FR, be` → `BE,FR`; `all` or `*` → `*`; or what is wrong. */
function parseCountryList(text: string): string | { error: string } | undefined {
  if (text === 'all' || text === '*') return '*';
  const codes = text.split(',').map((c) => c.trim().toUpperCase());
  if (codes.length === 0 || codes.some((c) => c === '')) return undefined;
  const unknown = codes.filter((c) => !/^[A-Z]{2}$/.test(c) || !isSupportedCountry(c));
  if (unknown.length > 0) return { error: `${unknown.join(', ')} is not a country the numbering plan knows` };
  return [...new Set(codes)].sort().join(',');
}
