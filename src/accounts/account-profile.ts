// An account's profile: what POST /account may set (checked field by field) and the account object the
// account reads answer, with SMSFactor's field names and the types its Java SDK parses.

import { isSupportedCountry } from 'libphonenumber-js/max';
import { normalEmail } from '../shared/email-address.ts';
import { ApiError } from '../shared/errors.ts';
import { idOut } from '../shared/ids.ts';
import { isValidSender } from '../sms/sender.ts';
import { isLocked } from './account-errors.ts';
import type { AccountView } from './accounts.schemas.ts';

/** POST /account's `account` object as it arrives (XML gives strings, JSON may give numbers). */
export interface SubAccountInput {
  email: string;
  password: string;
  firstname?: string;
  lastname?: string;
  company?: string;
  type?: string;
  phone?: string;
  address1?: string;
  address2?: string;
  zip?: string;
  city?: string;
  country_code?: string;
  sender?: string;
  description?: string;
  isChild?: string;
  unlimited?: string;
}

/** The profile as stored: null for a field not given. */
export interface Profile {
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  type: string | null;
  phone: string | null;
  address1: string | null;
  address2: string | null;
  zip: string | null;
  city: string | null;
  country_code: string | null;
  sender: string | null;
  description: string | null;
}

export const minPasswordLength = 8;
/** scrypt hashes any length, but a password is hashed on every legacy sign-in: bounded. */
export const maxPasswordLength = 200;
export const accountTypes = ['company', 'association', 'administration', 'private'] as const;

/** Free-text fields: their longest accepted value. */
const textLimits = {
  firstname: 100,
  lastname: 100,
  company: 150,
  address1: 200,
  address2: 200,
  zip: 20,
  city: 100,
  description: 500,
} as const;

const countryNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** The country's English name for an alpha-2 code, or "" when there is none. */
export const countryName = (code: string | null): string => (code ? (countryNames.of(code) ?? '') : '');

/** Checks an e-mail and a password as every account creation does (the operator's CLI and POST /account). */
export function checkCredentials(rawEmail: string, password: string, prefix = ''): string {
  const email = normalEmail(rawEmail);
  if (email === undefined) {
    throw ApiError.data(`${prefix}email "${rawEmail}" is not a valid e-mail address`);
  }
  if (password.length < minPasswordLength) {
    throw ApiError.data(`${prefix}password must have at least ${minPasswordLength} characters`);
  }
  if (password.length > maxPasswordLength) {
    throw ApiError.data(`${prefix}password must have at most ${maxPasswordLength} characters`);
  }
  return email;
}

/** A 0/1 flag (a JSON boolean too): absent is `absent`; anything else is a -7 naming the field. */
function flag(field: string, value: string | undefined, absent: 0 | 1): 0 | 1 {
  if (value === undefined || value.trim() === '') return absent;
  const v = value.trim().toLowerCase();
  if (v === '0' || v === 'false') return 0;
  if (v === '1' || v === 'true') return 1;
  throw ApiError.data(`account.${field} "${value}" must be 0 or 1`);
}

const optional = (value: string | undefined): string | null => {
  const v = value?.trim();
  return v === undefined || v === '' ? null : v;
};

/**
 * Checks POST /account's fields; the first broken rule is a -7 naming the field, the value and the rule.
 * Answers the normalized e-mail, the profile to store and whether the sub-account is unlimited.
 */
export function parseSubAccount(input: SubAccountInput): {
  email: string;
  profile: Profile;
  unlimited: 0 | 1;
} {
  const email = checkCredentials(input.email, input.password, 'account.');
  if (flag('isChild', input.isChild, 1) === 0) {
    throw ApiError.data(
      'account.isChild is 0: the API creates sub-accounts of the caller only (isChild 1); top-level accounts are created by the operator with the CLI (pigeon account create)',
    );
  }
  const unlimited = flag('unlimited', input.unlimited, 0);
  for (const [field, limit] of Object.entries(textLimits)) {
    const value = optional(input[field as keyof typeof textLimits]);
    if (value !== null && value.length > limit) {
      throw ApiError.data(`account.${field} is longer than ${limit} characters`);
    }
  }
  const type = optional(input.type)?.toLowerCase() ?? null;
  if (type !== null && !(accountTypes as readonly string[]).includes(type)) {
    throw ApiError.data(`account.type "${input.type}" must be one of: ${accountTypes.join(', ')}`);
  }
  let phone = optional(input.phone);
  if (phone !== null) {
    phone = phone.replace(/^\+|^00/, '');
    if (!/^\d{6,15}$/.test(phone)) {
      throw ApiError.data(
        `account.phone "${input.phone}" must be 6 to 15 digits, country code first (33612345678)`,
      );
    }
  }
  const countryCode = optional(input.country_code)?.toUpperCase() ?? null;
  if (countryCode !== null && !(/^[A-Z]{2}$/.test(countryCode) && isSupportedCountry(countryCode))) {
    throw ApiError.data(
      `account.country_code "${input.country_code}" must be an ISO 3166-1 alpha-2 country code (FR)`,
    );
  }
  const sender = optional(input.sender);
  if (sender !== null && !isValidSender(sender)) {
    throw ApiError.data(
      `account.sender "${sender}" must be 3 to 11 letters or digits with at least one letter, or up to 15 digits`,
    );
  }
  return {
    email,
    unlimited,
    profile: {
      first_name: optional(input.firstname),
      last_name: optional(input.lastname),
      company: optional(input.company),
      type,
      phone,
      address1: optional(input.address1),
      address2: optional(input.address2),
      zip: optional(input.zip),
      city: optional(input.city),
      country_code: countryCode,
      sender,
      description: optional(input.description),
    },
  };
}

/** What the account object is built from: the account row's profile and state. */
export interface AccountRow extends Profile {
  id: number;
  email: string;
  unlimited: number;
  /** Null: prepaid; else postpaid down to minus this many credits. */
  credit_limit: number | null;
  locked: number;
}

/**
 * The account object of GET /account and the sub-account reads. `credits` is what the account can spend
 * (its parent's for an unlimited sub-account). The Java SDK reads `client_id`, `credits`, `unlimited` and
 * `status` as integers, so `status` is 1 (active) or 0 (locked) and `state` says it in words. It reads
 * `senderid` as a string in GET /account but as an integer in the sub-account list, where a sender name
 * cannot go: there it is null, and `sender` (Pigeon's) carries the sender in both. An account without a
 * sender has `senderid` null in every read (its older releases read it as an integer in GET /account too,
 * where "" would not parse, and null does in both).
 */
export function accountView(row: AccountRow, credits: number, senderIdAs: 'text' | 'null'): AccountView {
  return {
    client_id: idOut(row.id),
    email: row.email,
    firstname: row.first_name ?? '',
    lastname: row.last_name ?? '',
    company: row.company ?? '',
    type: row.type ?? '',
    phone: row.phone ?? '',
    address1: row.address1 ?? '',
    address2: row.address2 ?? '',
    zip: row.zip ?? '',
    city: row.city ?? '',
    country: countryName(row.country_code),
    country_code: row.country_code ?? '',
    lang: '',
    credits: Number(credits),
    postpaid: row.credit_limit === null ? '0' : '1',
    unlimited: Number(row.unlimited) === 1 ? 1 : 0,
    description: row.description ?? '',
    senderid: senderIdAs === 'text' && row.sender ? row.sender : null,
    status: isLocked(row.locked) ? 0 : 1,
    state: isLocked(row.locked) ? 'locked' : 'active',
    sender: row.sender ?? '',
  };
}
