// The send form's live counter: the text each recipient will receive is built exactly as the server builds
// it (the same opt-out mention rule, the same splitter), so the parts shown are the parts charged.
import { type Pushtype, shortMarker, withStopMention } from '../../../src/campaigns/message-text.ts';
import {
  countSegments,
  gsmPartLimit,
  gsmSingleLimit,
  type SegmentCount,
  ucs2PartLimit,
  ucs2SingleLimit,
} from '../../../src/sms/segments.ts';
import { formatNumber } from '../format.ts';
import type { Session } from '../session.ts';

export interface Counted extends SegmentCount {
  /** Recipients given (before the server filters duplicates, invalid and blacklisted numbers out). */
  recipients: number;
  /** Credits for those recipients: parts × recipients. */
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
  return {
    ...segments,
    recipients: input.recipients,
    cost: segments.parts * input.recipients,
    approximate: reasons.length > 0 ? reasons.join('; ') : null,
  };
}

/** The counter under the text: characters, alphabet, parts and what the send costs. */
export function SendCounter({ counted }: { counted: Counted }) {
  const gsm = counted.encoding === 'gsm7';
  const single = gsm ? gsmSingleLimit : ucs2SingleLimit;
  const perPart = gsm ? gsmPartLimit : ucs2PartLimit;
  const floor = counted.approximate ? 'at least ' : '';
  return (
    <div class="send-counter" data-testid="counter" aria-live="polite">
      <p class="counter">
        <span data-testid="counter-characters">
          {formatNumber(counted.units)} character{counted.units === 1 ? '' : 's'}
        </span>
        {' · '}
        <span data-testid="counter-encoding">{gsm ? 'GSM-7' : 'UCS-2'}</span>
        {' · '}
        <span data-testid="counter-parts">
          {floor}
          {formatNumber(counted.parts)} part{counted.parts === 1 ? '' : 's'}
        </span>
        {' · '}
        <span data-testid="counter-cost">
          {floor}
          {formatNumber(counted.cost)} credit{counted.cost === 1 ? '' : 's'}
        </span>{' '}
        for {formatNumber(counted.recipients)} recipient{counted.recipients === 1 ? '' : 's'}
      </p>
      <p class="hint">
        {gsm ? 'GSM-7' : 'UCS-2'}: {single} characters fit in one SMS, {perPart} per part of a longer one
        {gsm ? '; € [ ] { } ^ ~ | \\ count 2' : ''}.
        {counted.approximate && ` Simulate for the exact cost: ${counted.approximate}.`}
      </p>
    </div>
  );
}
