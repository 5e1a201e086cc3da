// An erasure of a phone number (`pigeon erase`, POST /erase), as each capability receives it: each erases the
// number from its own tables inside the erasure's one transaction and says how many rows of each kind changed.

export interface Erasure {
  /** The number, normalized as sends store it: digits, country code first. */
  number: string;
  /** The accounts whose data it is erased from; undefined for every account (the operator's CLI). */
  accountIds: readonly number[] | undefined;
  /** What replaces the number in a row that is kept (a message, for billing and the campaign's counters). */
  placeholder: string;
}

/** Rows deleted or overwritten, per kind (a table's name). */
export type ErasedCounts = Record<string, number>;

/**
 * A LIKE pattern matching a JSON document (an event's body, an invoice's customer) that holds the number as
 * a whole string value: `"33612345678"`, never a longer number that happens to contain its digits.
 */
export const jsonValuePattern = (number: string): string => `%"${number}"%`;
