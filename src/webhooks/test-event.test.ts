import { describe, expect, it } from 'vitest';
import { eventTypes } from '../events/event-bodies.ts';
import { zonedTime } from '../shared/zoned-time.ts';
import { testEventPayload } from './test-event.ts';

// 2026-07-14 12:30:05.250 in Paris: a test event is dated to the second, like real events.
const now = Date.UTC(2026, 6, 14, 10, 30, 5, 250);
const dates = zonedTime('Europe/Paris');

describe('test event', () => {
  it('has the body of a real event of each type, sample values, dated to the second', () => {
    const bodies = Object.fromEntries(
      eventTypes.map((type) => [type, testEventPayload(type, 5, now, dates)]),
    );
    expect(bodies).toEqual({
      MO:
        '{"date":"2026-07-14T12:30:05+02:00","message":"Test reply from Pigeon","from":"33600000000",' +
        '"account_id":"5","last_message_id":"test"}',
      DLR:
        '{"date":"2026-07-14T12:30:05+02:00","status":3,"destination":"33600000000","message_id":"test",' +
        '"campaign_id":"0","country_code":"FR"}',
      STOP:
        '{"date":"2026-07-14T12:30:05+02:00","message":"STOP","from":"33600000000","account_id":"5",' +
        '"last_message_id":"test"}',
      CLICKER:
        '{"campaign_id":"0","gsmsid":"test","date":"2026-07-14 12:30:05","long_url":"https://example.com/",' +
        '"short_url":"https://example.com/test","brand":"","model":"","os":"","info1":"","info2":"","info3":"",' +
        '"info4":"","clicks_on_link":1}',
      BALANCE_ALERT: '{"balance":100,"trigger":100,"date":"2026-07-14 12:30:05"}',
      MODERATION:
        '{"campaign_id":"0","status":"pending","reason":"rule 0 (word \\"test\\") matched \\"test\\"","date":"2026-07-14 12:30:05"}',
    });
  });
});
