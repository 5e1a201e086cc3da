// What names a send's recipients besides their numbers: a recipient's `gsmsmsid` (POST /send), which a list
// send does not take. Checked before anything is read.
import { ApiError } from '../shared/errors.ts';

export interface RecipientInput {
  value: string;
  gsmsmsid?: string;
}

/** One list of POST /send/lists: its id in `value`. */
export interface ListRef {
  value: string;
  /** Not taken here: refused rather than silently dropped (see refuseGsmsmsid). */
  gsmsmsid?: unknown;
}

/**
 * `gsmsmsid` names one recipient's message on POST /send (and GET /send). A list campaign's recipients are
 * its lists' contacts, so an id given beside a list could name none of them: it is refused, not dropped.
 */
export function refuseGsmsmsid(listRefs: readonly ListRef[]): void {
  const given = listRefs.find((ref) => ref.gsmsmsid !== undefined);
  if (given === undefined) return;
  throw ApiError.data(
    `gsmsmsid is not taken on /send/lists (list ${given.value}): it applies to POST /send, one per number; a list campaign's messages are identified by their contacts`,
  );
}

const maxGsmsmsidLength = 100;

/** -7 for a `gsmsmsid` longer than SMSFactor takes. */
export function checkGsmsmsids(recipients: readonly RecipientInput[]): void {
  for (const r of recipients) {
    if (r.gsmsmsid !== undefined && r.gsmsmsid.length > maxGsmsmsidLength) {
      throw ApiError.data(
        `sms.recipients.gsm: gsmsmsid "${r.gsmsmsid.slice(0, 20)}…" is longer than ${maxGsmsmsidLength} characters`,
      );
    }
  }
}
