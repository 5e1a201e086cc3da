// The send form's live counter under the text: what `countMessage` (count-message.ts) counted.
import { gsmPartLimit, gsmSingleLimit, ucs2PartLimit, ucs2SingleLimit } from '../../../src/sms/segments.ts';
import { formatNumber } from '../format.ts';
import type { Counted } from './count-message.ts';

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
