import { describe, expect, it } from 'vitest';
import { ApiError } from '../shared/errors.ts';
import {
  parseCampaignMessagesQuery,
  parseCampaignsQuery,
  parseClickBucket,
  parseCountry,
  parseHistoryPeriod,
  parseMessagesQuery,
  parseRepliesQuery,
  parseSort,
} from './query-parsers.ts';

const paris = 'Europe/Paris';
/** 2026-05-04 12:00:00 in Paris (UTC+2). */
const noon = Date.UTC(2026, 4, 4, 10);
const hourMs = 3_600_000;

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, details: error.details };
    throw error;
  }
  return undefined;
};

describe('the reads check their query before anything is read', () => {
  it('sort is a key with a leading - for descending, the fallback when absent, -7 for any other key', () => {
    const keys = ['id', 'date'] as const;
    const fallback = { key: 'date' as const, descending: true };
    expect(parseSort(undefined, keys, fallback)).toEqual(fallback);
    expect(parseSort(' ', keys, fallback)).toEqual(fallback);
    expect(parseSort('id', keys, fallback)).toEqual({ key: 'id', descending: false });
    expect(parseSort(' -ID ', keys, fallback)).toEqual({ key: 'id', descending: true });
    expect(refusal(() => parseSort('-cost', keys, fallback))).toEqual({
      status: -7,
      details: 'sort "-cost" must be one of id, date, with a leading - to sort descending (e.g. -id)',
    });
  });

  it('GET /campaigns: dates inclusive to the second, sms bounds ordered, text trimmed, a number normalized', () => {
    const parsed = parseCampaignsQuery(
      {
        date_start: '2026-05-04 12:00:00',
        date_end: '2026-05-04 13:00:00',
        sms_min: '2',
        sms_max: '99999999999',
        text: '  promo ',
        destination: '+33 6 12 34 56 78',
        sort: 'cost',
      },
      paris,
    );
    expect(parsed).toEqual({
      page: { start: 0, length: 100 },
      filter: { from: noon, to: noon + hourMs + 999, sentMin: 2, sentMax: 2 ** 31 - 1, text: 'promo' },
      destination: '33612345678',
      sort: { key: 'cost', descending: false },
    });
    expect(parseCampaignsQuery({}, paris).sort).toEqual({ key: 'date', descending: true });
    expect(refusal(() => parseCampaignsQuery({ sms_min: '3', sms_max: '2' }, paris))).toEqual({
      status: -7,
      details: 'sms_min "3" is more than sms_max "2"',
    });
    expect(refusal(() => parseCampaignsQuery({ date_start: '2026-05-04' }, paris))).toEqual({
      status: -7,
      details: 'date_start "2026-05-04" must be a date as Y-m-d H:i:s (e.g. 2026-05-04 14:30:00)',
    });
    expect(
      refusal(() =>
        parseCampaignsQuery({ date_start: '2026-05-04 12:00:01', date_end: '2026-05-04 12:00:00' }, paris),
      ),
    ).toEqual({
      status: -7,
      details: 'date_start "2026-05-04 12:00:01" is after date_end "2026-05-04 12:00:00"',
    });
    expect(refusal(() => parseCampaignsQuery({ text: 'x'.repeat(161) }, paris))).toEqual({
      status: -7,
      details: 'text is 161 characters long; a text filter holds at most 160',
    });
    expect(refusal(() => parseCampaignsQuery({ destination: 'abc' }, paris))?.status).toBe(-7);
  });

  it('a history period is the last 24 hours by default, 24 hours from or to one date, at most 31 days', () => {
    expect(parseHistoryPeriod({}, paris, noon)).toEqual({ from: noon - 24 * hourMs, to: noon + 999 });
    expect(parseHistoryPeriod({ date_start: '2026-05-04 12:00:00' }, paris, 0)).toEqual({
      from: noon,
      to: noon + 24 * hourMs + 999,
    });
    expect(parseHistoryPeriod({ date_end: '2026-05-04 12:00:00' }, paris, 0)).toEqual({
      from: noon - 24 * hourMs,
      to: noon + 999,
    });
    expect(
      refusal(() =>
        parseHistoryPeriod({ date_start: '2026-04-01 00:00:00', date_end: '2026-05-04 00:00:00' }, paris, 0),
      ),
    ).toEqual({
      status: -7,
      details:
        'date_start "2026-04-01 00:00:00" and date_end "2026-05-04 00:00:00" are more than 31 days apart; a history read covers at most 31 days',
    });
  });

  it('GET /messages: a DLR code, a country with the calling codes it shares; GET /messages/mo: its sort keys', () => {
    const parsed = parseMessagesQuery(
      { status: '3', country: 'ca', message: ' hi ', sort: '-status' },
      paris,
      noon,
    );
    expect(parsed.status).toBe(3);
    expect(parsed.text).toBe('hi');
    expect(parsed.sort).toEqual({ key: 'status', descending: true });
    expect(parsed.country?.code).toBe('CA');
    expect(parsed.country?.callingCode).toBe('1');
    expect(parsed.country?.sharedWith).toContain('US');
    expect(parseCountry('fr')).toEqual({ code: 'FR', callingCode: '33', sharedWith: [] });
    expect(refusal(() => parseCountry('XX'))).toEqual({
      status: -7,
      details: 'country "XX" must be an ISO 3166-1 alpha-2 country code (e.g. FR)',
    });
    expect(refusal(() => parseMessagesQuery({ status: '8' }, paris, noon))?.details).toMatch(
      /^status "8" must be a DLR code: /,
    );
    expect(parseRepliesQuery({ sort: 'text' }, paris, noon).sort).toEqual({ key: 'text', descending: false });
    expect(refusal(() => parseRepliesQuery({ sort: 'destination' }, paris, noon))?.status).toBe(-7);
  });

  it('a campaign page takes 1 to 500 messages (100 by default) and a DLR code; clicks go by hour or day', () => {
    expect(parseCampaignMessagesQuery({})).toEqual({ page: { start: 0, length: 100 }, status: undefined });
    expect(parseCampaignMessagesQuery({ start: '5', length: '500', status: '0' })).toEqual({
      page: { start: 5, length: 500 },
      status: 0,
    });
    expect(refusal(() => parseCampaignMessagesQuery({ length: '501' }))?.status).toBe(-7);
    expect(parseClickBucket(undefined)).toBe('hour');
    expect(parseClickBucket(' DAY ')).toBe('day');
    expect(refusal(() => parseClickBucket('week'))).toEqual({
      status: -7,
      details: 'bucket "week" must be one of hour, day',
    });
  });
});
