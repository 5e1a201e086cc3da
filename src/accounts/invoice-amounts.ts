// Invoice amounts as whole cents (integers, so no float drift), and their text as the API and the PDF show
// them. Every product and sum stays below 2^53, so plain numbers are exact.
import { ApiError } from '../shared/errors.ts';

/** The largest price taken: 999,999,999.99 (times a VAT rate of 100.00 %, still an exact integer). */
export const maxPriceCents = 99_999_999_999;

/** `12.50`, `12.5`, `12`: a price with at most 2 decimals, to cents; a -7 naming `field` otherwise. */
export function parsePriceCents(raw: string, field: string): number {
  const text = raw.trim();
  const match = /^(\d{1,9})(?:[.,](\d{1,2}))?$/.exec(text);
  if (!match) {
    throw ApiError.data(
      `${field} "${raw}" must be an amount of at least 0 with at most 2 decimals, such as 12.50 (at most 999999999.99)`,
    );
  }
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

/** An ISO 4217 code (`EUR`, `usd`) in upper case; a -7 naming `field` otherwise. */
export function parseCurrency(raw: string, field: string): string {
  const code = raw.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(code)) {
    throw ApiError.data(`${field} "${raw}" must be a 3-letter ISO 4217 currency code, such as EUR`);
  }
  return code;
}

/** A rate in percent with up to 2 decimals (`20`, `5.5`) in hundredths of a percent (2000, 550). */
export function percentToBasisPoints(percent: string): number {
  const [whole, decimals = ''] = percent.trim().split('.');
  return Number(whole) * 100 + Number(decimals.padEnd(2, '0'));
}

/** Integer division rounded half up, for non-negative integers. */
const divideRounded = (numerator: number, denominator: number): number =>
  Math.floor((2 * numerator + denominator) / (2 * denominator));

/** The VAT on a price, rounded half up to the cent: 1250 at 2000 basis points is 250. */
export const vatCents = (priceCents: number, basisPoints: number): number =>
  divideRounded(priceCents * basisPoints, 10_000);

/** Cents as text with 2 decimals: 1500 → `15.00`. */
export function formatCents(cents: number): string {
  const whole = Math.floor(cents / 100);
  return `${whole}.${String(cents - whole * 100).padStart(2, '0')}`;
}

/** Basis points as a percentage with 2 decimals: 2000 → `20.00`, 550 → `5.50`. */
export const formatBasisPoints = formatCents;

/**
 * The price of one credit: `priceCents / quantity`, rounded half up to 6 decimals and shown with 2 to 6
 * (12.50 for 1000 credits → `0.0125`). Informative: the line's price is the exact one.
 */
export function unitPrice(priceCents: number, quantity: number): string {
  if (quantity <= 0) return formatCents(priceCents);
  const micros = divideRounded(priceCents * 10_000, quantity);
  const whole = Math.floor(micros / 1_000_000);
  const decimals = String(micros - whole * 1_000_000)
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${whole}.${decimals.padEnd(2, '0')}`;
}
