import { describe, expect, it } from 'vitest';
import {
  type BalanceAlertBody,
  balanceAlertPayload,
  type ClickerBody,
  clickerPayload,
  clickerTemplate,
  type DlrBody,
  dlrPayload,
  eventTypes,
  isEventType,
  type MoBody,
  replyPayload,
} from './event-bodies.ts';

// Each literal is the text the inline code built before these builders existed (delivery, links, accounts):
// members in SMSFactor's order, ids as strings, counts as numbers.
describe('event bodies', () => {
  it("names the five event types in the order API.md lists them, then Pigeon's MODERATION, and nothing else", () => {
    expect(eventTypes).toEqual(['MO', 'DLR', 'STOP', 'CLICKER', 'BALANCE_ALERT', 'MODERATION']);
    expect(isEventType('CLICKER')).toBe(true);
    expect(isEventType('clicker')).toBe(false);
    expect(isEventType('')).toBe(false);
  });

  it('DLR: date, numeric status, destination, gsmsmsid, ticket as a string, country', () => {
    const payload = dlrPayload('2026-07-14T12:30:05+02:00', 3, '33612345678', 'a1b2c3', 42, 'FR');
    expect(payload).toBe(
      '{"date":"2026-07-14T12:30:05+02:00","status":3,"destination":"33612345678","message_id":"a1b2c3",' +
        '"campaign_id":"42","country_code":"FR"}',
    );
    const body: DlrBody = JSON.parse(payload);
    expect(Object.keys(body)).toEqual([
      'date',
      'status',
      'destination',
      'message_id',
      'campaign_id',
      'country_code',
    ]);
  });

  it('DLR: a message without gsmsmsid and a number of no known country give empty strings', () => {
    expect(dlrPayload('2026-01-02T03:04:05Z', 0, '999', null, 7, undefined)).toBe(
      '{"date":"2026-01-02T03:04:05Z","status":0,"destination":"999","message_id":"","campaign_id":"7","country_code":""}',
    );
  });

  it('MO and STOP: date, the text as sent, the number, account id and last gsmsmsid as strings', () => {
    const payload = replyPayload(
      '2026-07-14T12:30:05+02:00',
      'Oui "merci" \\ é 😀\n',
      '33612345678',
      5,
      'g1',
    );
    expect(payload).toBe(
      '{"date":"2026-07-14T12:30:05+02:00","message":"Oui \\"merci\\" \\\\ é 😀\\n","from":"33612345678",' +
        '"account_id":"5","last_message_id":"g1"}',
    );
    const body: MoBody = JSON.parse(payload);
    expect(Object.keys(body)).toEqual(['date', 'message', 'from', 'account_id', 'last_message_id']);
    expect(replyPayload('2026-07-14T12:30:05+02:00', 'STOP', '33612345678', 5, null)).toBe(
      '{"date":"2026-07-14T12:30:05+02:00","message":"STOP","from":"33612345678","account_id":"5","last_message_id":""}',
    );
  });

  it('BALANCE_ALERT: balance and trigger as numbers, then the date', () => {
    const payload = balanceAlertPayload(-12, 100, '2026-07-14 12:30:05');
    expect(payload).toBe('{"balance":-12,"trigger":100,"date":"2026-07-14 12:30:05"}');
    const body: BalanceAlertBody = JSON.parse(payload);
    expect(body).toEqual({ balance: -12, trigger: 100, date: '2026-07-14 12:30:05' });
  });

  it('CLICKER: thirteen members in order, whatever the strings hold', () => {
    const link = {
      campaignId: 42,
      gsmsmsid: 'quote " backslash \\ newline \n tab \t',
      longUrl: 'https://shop.example/é?a=1&b=<2>',
      shortUrl: 'https://l.example/abcDEF1234',
      info1: 'Zoë',
      info2: '\u2028 line separator',
      info3: '😀',
      info4: '',
    };
    const device = { brand: 'Apple', model: 'iPhone "Pro"', os: 'iOS 17.0' };
    const payload = clickerPayload(clickerTemplate(link), '2026-07-14 12:30:05', device, 7);
    expect(payload).toBe(
      '{"campaign_id":"42","gsmsid":"quote \\" backslash \\\\ newline \\n tab \\t","date":"2026-07-14 12:30:05",' +
        '"long_url":"https://shop.example/é?a=1&b=<2>","short_url":"https://l.example/abcDEF1234",' +
        '"brand":"Apple","model":"iPhone \\"Pro\\"","os":"iOS 17.0",' +
        '"info1":"Zoë","info2":"\u2028 line separator","info3":"😀","info4":"","clicks_on_link":7}',
    );
    const body: ClickerBody = JSON.parse(payload);
    expect(body).toEqual({
      campaign_id: '42',
      gsmsid: link.gsmsmsid,
      date: '2026-07-14 12:30:05',
      long_url: link.longUrl,
      short_url: link.shortUrl,
      brand: 'Apple',
      model: 'iPhone "Pro"',
      os: 'iOS 17.0',
      info1: 'Zoë',
      info2: link.info2,
      info3: '😀',
      info4: '',
      clicks_on_link: 7,
    });
    // The same device object again (the device cache hands out one per user agent) gives the same members.
    expect(clickerPayload(clickerTemplate(link), '2026-07-14 12:30:06', device, 8)).toContain(
      '"brand":"Apple","model":"iPhone \\"Pro\\"","os":"iOS 17.0"',
    );
  });
});
