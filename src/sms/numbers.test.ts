import { describe, expect, it } from 'vitest';
import { checkNumber, countryOf } from './numbers.ts';

describe('the country of a stored number', () => {
  it('is the one the full check tells, for calling codes of one country and shared ones alike', () => {
    const numbers = [
      '33612345678', // FR
      '32470123456', // BE
      '41791234567', // CH
      '4915112345678', // DE
      '34612345678', // ES
      '12015550123', // US (NANP, shared)
      '15062345678', // CA (NANP, shared)
      '447400123456', // GB (44, shared)
      '447781123456', // GG (44, shared)
      '262692123456', // RE (262, shared)
      '262639012345', // YT (262, shared)
      '79123456789', // RU (7, shared)
      '77710009998', // KZ (7, shared)
      '590690001234', // GP (590, shared)
      '212612345678', // MA
      '2250123456789', // CI
    ];
    for (const number of numbers) {
      const expected = checkNumber(number);
      expect(expected.valid, number).toBe(true);
      expect(countryOf(number), number).toBe(expected.country);
    }
  });

  it('is undefined for digits under no calling code', () => {
    expect(countryOf('999123456')).toBe(checkNumber('999123456').country);
  });
});
