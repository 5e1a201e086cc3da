import { describe, expect, it } from 'vitest';
import { clickerPayload, clickerTemplate } from './clicker-payload.ts';

describe('CLICKER payload', () => {
  it('is the JSON of the API.md object, members in order, whatever the strings hold', () => {
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
      JSON.stringify({
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
      }),
    );
    // The same device object again (the device cache hands out one per user agent) gives the same members.
    expect(clickerPayload(clickerTemplate(link), '2026-07-14 12:30:06', device, 8)).toContain(
      '"brand":"Apple","model":"iPhone \\"Pro\\"","os":"iOS 17.0"',
    );
  });
});
