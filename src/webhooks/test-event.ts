// What a test delivery (POST /webhook/:id/test) carries: an event of the webhook's type with sample values,
// built by the builders of real events (src/events/event-bodies.ts), so it has their members in their order,
// their types, and their dates (to the second).
import {
  balanceAlertPayload,
  clickerPayload,
  clickerTemplate,
  dlrPayload,
  moderationPayload,
  replyPayload,
} from '../events/event-bodies.ts';
import type { ZonedTime } from '../shared/zoned-time.ts';
import { DlrStatus } from '../sms/dlr-status.ts';

const sampleNumber = '33600000000';
const sampleGsmsmsid = 'test';
const sampleLink = clickerTemplate({
  campaignId: 0,
  gsmsmsid: sampleGsmsmsid,
  longUrl: 'https://example.com/',
  shortUrl: 'https://example.com/test',
  info1: '',
  info2: '',
  info3: '',
  info4: '',
});
const unknownDevice = { brand: '', model: '', os: '' };

/** The JSON body of a test event of the webhook's `type`, dated `now`, for the account it belongs to. */
export function testEventPayload(type: string, accountId: number, now: number, dates: ZonedTime): string {
  switch (type) {
    case 'DLR':
      return dlrPayload(dates.isoSecond(now), DlrStatus.delivered, sampleNumber, sampleGsmsmsid, 0, 'FR');
    case 'MO':
      return replyPayload(
        dates.isoSecond(now),
        'Test reply from Pigeon',
        sampleNumber,
        accountId,
        sampleGsmsmsid,
      );
    case 'STOP':
      return replyPayload(dates.isoSecond(now), 'STOP', sampleNumber, accountId, sampleGsmsmsid);
    case 'CLICKER':
      return clickerPayload(sampleLink, dates.wallTime(now), unknownDevice, 1);
    case 'MODERATION':
      return moderationPayload(0, 'pending', 'rule 0 (word "test") matched "test"', dates.wallTime(now));
    default:
      return balanceAlertPayload(100, 100, dates.wallTime(now));
  }
}
