// One number's lookup answer, in SMSFactor's shape, and the seam a lookup provider plugs into.
import type { LookupResultView } from './lookup.schemas.ts';

/** One number's lookup answer: the schema's view (lookup.schemas.ts). */
export type LookupResult = LookupResultView;

/**
 * Looks numbers up (normalized digits, country code first), one answer per number in the same order. A
 * provider that queries a network (an HLR service) implements this; it is called outside any transaction.
 */
export interface LookupProvider {
  readonly name: string;
  lookup(numbers: readonly string[]): Promise<LookupResult[]>;
}
