// A send's message checked into its plan before any recipient is read: text, pushtype, unicode, sender,
// links and their markers, the parts of the text alone, and the due time (delay, sending window). The send
// service prices each recipient's final text against the same MAX_PARTS rule (`tooManyParts`).
import type { Config } from '../config.ts';
import { scalarText } from '../shared/bounds.ts';
import { ApiError } from '../shared/errors.ts';
import { countSegments, gsmPartLimit, type SegmentCount, ucs2PartLimit } from '../sms/segments.ts';
import { isValidSender } from '../sms/sender.ts';
import { nextOpening } from '../sms/sending-window.ts';
import { dueAt } from './delay.ts';
import { countMarkers, type Pushtype, shortMarker, withStopMention } from './message-text.ts';

export interface MessageInput {
  text: string;
  pushtype?: string;
  links?: string[];
  delay?: string;
  sender?: string;
  unicode?: unknown;
}

export interface Plan {
  text: string;
  pushtype: Pushtype;
  unicode: boolean;
  sender: string | null;
  links: string[];
  dueAt: number;
}

export type SendPlanner = ReturnType<typeof createSendPlanner>;

/** The checks of a send that need no database: made once per service, called per send. */
export function createSendPlanner(
  config: Pick<Config, 'MAX_RECIPIENTS' | 'TIMEZONE' | 'STOP_MENTION' | 'MARKETING_WINDOW' | 'MAX_PARTS'>,
) {
  const marketingWindow = config.MARKETING_WINDOW;

  /**
   * Checks every message field; the first broken rule is a -7 (or -4 for the delay) naming it. `at`: when the
   * send is due as an instant (an SMPP schedule_delivery_time), instead of `message.delay`.
   */
  function plan(message: MessageInput, now: number, at?: number): Plan {
    const text = message.text;
    if (text.trim() === '') throw ApiError.data('sms.message.text must not be empty');

    const pushtype = (message.pushtype ?? '').trim().toLowerCase() || 'alert';
    if (pushtype !== 'alert' && pushtype !== 'marketing') {
      throw ApiError.data(`sms.message.pushtype "${message.pushtype}" must be "alert" or "marketing"`);
    }

    const unicodeRaw = scalarText('sms.message.unicode', message.unicode);
    let unicode = false;
    if (unicodeRaw !== undefined && unicodeRaw !== '') {
      const u = unicodeRaw.trim();
      if (u !== '0' && u !== '1') throw ApiError.data(`sms.message.unicode "${u}" must be 0 or 1`);
      unicode = u === '1';
    }

    const senderRaw = (message.sender ?? '').trim();
    if (senderRaw !== '' && !isValidSender(senderRaw)) {
      throw ApiError.data(
        `sms.message.sender "${senderRaw}" must be 3 to 11 letters or digits with at least one letter, or up to 15 digits`,
      );
    }

    const urls = (message.links ?? []).map((l) => String(l).trim()).filter((l) => l !== '');
    for (const url of urls) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (!parsed || parsed.hostname === '') throw ApiError.data(`sms.message.links: "${url}" is not a URL`);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw ApiError.data(`sms.message.links: "${url}" must be an http or https URL`);
      }
    }
    const markers = countMarkers(text);
    if (markers !== urls.length) {
      throw ApiError.data(
        `sms.message.text has ${markers} ${shortMarker} marker${markers === 1 ? '' : 's'} but ${urls.length} link${urls.length === 1 ? ' was' : 's were'} given in sms.message.links; they must match one to one`,
      );
    }

    const final = withStopMention(text, pushtype, config.STOP_MENTION);
    // Refused before any recipient is read when the text alone is too long: its links and a contact's
    // fields only lengthen it, but for the few characters of an `[infoN]` field a contact leaves empty.
    const bare = final
      .split(shortMarker)
      .join('')
      .replace(/\[info[1-4]\]/g, '');
    const atLeast = countSegments(bare, unicode);
    if (atLeast.parts > config.MAX_PARTS) {
      const exact = bare === final;
      throw tooManyParts('sms.message.text', `${exact ? '' : 'at least '}${atLeast.parts}`, atLeast);
    }

    // Marketing waits for the sending window: a send (or a delay) outside it goes at the next opening.
    const due = at === undefined ? dueAt(message.delay, config.TIMEZONE, now) : Math.max(at, now);
    return {
      text: final,
      pushtype,
      unicode,
      sender: senderRaw === '' ? null : senderRaw,
      links: urls,
      dueAt: pushtype === 'marketing' ? nextOpening(marketingWindow, due) : due,
    };
  }

  /**
   * A text longer than MAX_PARTS parts is refused: the concatenation header counts parts in one byte, and
   * a text of hundreds of parts is a mistake that would cost its sender hundreds of credits per recipient.
   */
  function tooManyParts(what: string, parts: string, segments: SegmentCount): ApiError {
    const perPart = segments.encoding === 'gsm7' ? gsmPartLimit : ucs2PartLimit;
    const alphabet = segments.encoding === 'gsm7' ? 'GSM-7' : 'UCS-2';
    return ApiError.data(
      `${what} needs ${parts} SMS parts (${segments.units} ${alphabet} characters, ${perPart} per part); a message may have at most ${config.MAX_PARTS} (MAX_PARTS)`,
    );
  }

  function checkRecipientCount(count: number, field: string): void {
    if (count === 0) throw ApiError.data(`${field} is empty: give at least one recipient`);
    if (count > config.MAX_RECIPIENTS) {
      throw ApiError.data(
        `${field} has ${count} recipients; at most ${config.MAX_RECIPIENTS} are allowed per send`,
      );
    }
  }

  return { plan, tooManyParts, checkRecipientCount };
}
