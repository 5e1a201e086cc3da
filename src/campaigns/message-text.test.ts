import { describe, expect, it } from 'vitest';
import { normalizeNumber, parseCountries } from '../sms/numbers.ts';
import { compileTemplate, countMarkers, render, withStopMention } from './message-text.ts';

describe('message text', () => {
  it('every <-short-> marker is counted, even back to back', () => {
    expect(countMarkers('no link')).toBe(0);
    expect(countMarkers('a <-short-> b <-short->')).toBe(2);
    expect(countMarkers('<-short-><-short->')).toBe(2);
  });

  it('marketing: the mention goes where <-stop-> stands, else on a new line at the end', () => {
    expect(withStopMention('Sale! <-stop-> Bye', 'marketing', 'STOP au 36180')).toBe(
      'Sale! STOP au 36180 Bye',
    );
    expect(withStopMention('Sale!', 'marketing', 'STOP au 36180')).toBe('Sale!\nSTOP au 36180');
    expect(withStopMention('Sale! ', 'marketing', 'STOP au 36180')).toBe('Sale! STOP au 36180');
    expect(withStopMention('<-stop-> a <-stop->', 'marketing', 'S')).toBe('S a ');
  });

  it('alert: no mention, and <-stop-> markers are removed', () => {
    expect(withStopMention('Code 1234', 'alert', 'STOP')).toBe('Code 1234');
    expect(withStopMention('Code <-stop->1234<-stop->', 'alert', 'STOP')).toBe('Code 1234');
  });

  it('renders links in marker order and contact fields in one pass', () => {
    const t = compileTemplate('Hi [info1] [info2], see <-short-> and <-short->[info4]');
    const contact = { info1: 'Ann', info2: '[info3]', info3: 'X', info4: null };
    expect(render(t, ['u1', 'u2'], contact)).toBe('Hi Ann [info3], see u1 and u2');
    // Without a contact (a /send campaign) fields stay as written.
    expect(render(t, ['u1', 'u2'])).toBe('Hi [info1] [info2], see u1 and u2[info4]');
    // A field holding a marker is not a marker.
    expect(
      render(compileTemplate('[info1]'), [], { info1: '<-short->', info2: null, info3: null, info4: null }),
    ).toBe('<-short->');
  });
});

describe('numbers', () => {
  it('keeps digits with the country code first; accepts and strips a leading + or 00', () => {
    expect(normalizeNumber('33612345678')).toBe('33612345678');
    expect(normalizeNumber('+33612345678')).toBe('33612345678');
    expect(normalizeNumber('0033612345678')).toBe('33612345678');
    expect(normalizeNumber(' +33 6 12 34 56 78 ')).toBe('33612345678');
    expect(normalizeNumber('0612345678')).toBeUndefined();
    expect(normalizeNumber('33-612345678')).toBeUndefined();
    expect(normalizeNumber('abc')).toBeUndefined();
    expect(normalizeNumber('1234567890123456')).toBeUndefined();
  });

  it('ALLOWED_COUNTRIES is read as upper-case codes; unset allows every country', () => {
    expect(parseCountries(undefined)).toBeUndefined();
    expect(parseCountries('fr, BE')).toEqual(new Set(['FR', 'BE']));
  });
});
