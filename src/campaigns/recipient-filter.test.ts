// Each recipient lands in one bucket; `rejected` is told of every one not kept, as it was given, with the
// bucket it landed in (what an SMPP submit_multi answers per destination).
import { describe, expect, it } from 'vitest';
import { type FilterReason, filterRecipients } from './recipient-filter.ts';

describe('filterRecipients', () => {
  it('tells `rejected` of each recipient not kept, as given, and why', async () => {
    const told: [string, FilterReason][] = [];
    const given = ['+33612345678', '12', '33612345678', '33612340001', '33612340002', '4915112345678', 'abc'];
    const { kept, counts } = await filterRecipients(
      given.map((raw) => ({ raw, item: raw })),
      {
        allowedCountries: new Set(['FR']),
        lookup: async () => [
          { number: '33612340001', list: 'blacklist' },
          { number: '33612340002', list: 'npai' },
        ],
        anyListed: async () => true,
        chunk: 100,
        rejected: (raw, reason) => told.push([raw, reason]),
      },
    );
    expect(kept.map((k) => k.item)).toEqual(['+33612345678']);
    expect(told).toEqual([
      ['12', 'invalid'],
      ['33612345678', 'duplicated'],
      ['4915112345678', 'not_allowed'],
      ['abc', 'invalid'],
      ['33612340001', 'blacklisted'],
      ['33612340002', 'npai'],
    ]);
    expect(counts).toEqual({
      total: 7,
      sent: 1,
      invalid: 2,
      duplicated: 1,
      not_allowed: 1,
      blacklisted: 1,
      npai: 1,
    });
  });
});
