// The send form's live count: the text each recipient will receive is built exactly as the server builds it
// (the same opt-out mention rule, the same splitter), so the parts shown are the parts charged, each at the
// price the server says the account pays (GET /account/prices). No JSX: the tests import it as it is.
import { type Pushtype, shortMarker, withStopMention } from '../../../src/campaigns/message-text.ts';
import type { AccountPricesView } from '../../../src/prices/prices.schemas.ts';
import { countSegments, type SegmentCount } from '../../../src/sms/segments.ts';
import type { Session } from '../session.ts';

export interface Counted extends SegmentCount {
  /** Recipients given (before the server filters duplicates, invalid and blacklisted numbers out). */
  recipients: number;
  /** Credits for those recipients: parts × recipients × the price of a part (the lowest, when prices differ). */
  cost: number;
  /** Why the count is a floor rather than exact, if it is: the contacts' fields of a list campaign. */
  approximate: string | null;
}

export function countMessage(input: {
  text: string;
  pushtype: Pushtype;
  unicode: boolean;
  recipients: number;
  /** List campaigns substitute each contact's `[info1]`…`[info4]`. */
  withFields: boolean;
  session: Session;
  /** What a part costs the account (GET /account/prices); null while not read: one credit, as without prices. */
  prices: AccountPricesView | null;
}): Counted {
  // Every short URL has the same length (LINK_BASE_URL, a slash and the code), which the session tells.
  const linkLength = input.session.short_url_length;
  const final = withStopMention(input.text, input.pushtype, input.session.stop_mention);
  // Short codes are base62, one GSM-7 septet a character, so any string of the URL's length counts the same.
  let counted = final.split(shortMarker).join('x'.repeat(linkLength));
  const hasFields = input.withFields && /\[info[1-4]\]/.test(counted);
  if (hasFields) counted = counted.replace(/\[info[1-4]\]/g, '');
  const segments = countSegments(counted, input.unicode);
  const reasons: string[] = [];
  if (hasFields) reasons.push("each contact's [info] fields add to its length");
  const range = partPrices(input.prices);
  // The browser does not know each number's country: where prices differ, the cheapest is a floor.
  if (range.lowest !== range.highest) {
    reasons.push(`a part costs ${range.lowest} to ${range.highest} credits depending on the destination`);
  }
  return {
    ...segments,
    recipients: input.recipients,
    cost: segments.parts * input.recipients * range.lowest,
    approximate: reasons.length > 0 ? reasons.join('; ') : null,
  };
}

/** The lowest and highest price of one part among the account's prices (one credit each without a list). */
export function partPrices(prices: AccountPricesView | null): { lowest: number; highest: number } {
  if (prices === null) return { lowest: 1, highest: 1 };
  const all = [prices.default, ...Object.values(prices.by_country), ...prices.prefixes.map((p) => p.credits)];
  return { lowest: Math.min(...all), highest: Math.max(...all) };
}
