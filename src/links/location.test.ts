import { describe, expect, it } from 'vitest';
import { locationOf } from './location.ts';

describe('locationOf gives a header-safe Location', () => {
  it('leaves printable ASCII URLs untouched', () => {
    const url = 'https://example.com/a/b?utm_source=sms&x=%20#frag';
    expect(locationOf(url)).toBe(url);
  });

  it('encodes non-ASCII paths and punycodes hosts', () => {
    expect(locationOf('https://exemple.fr/été?q=à')).toBe('https://exemple.fr/%C3%A9t%C3%A9?q=%C3%A0');
    expect(locationOf('https://bücher.de/')).toBe('https://xn--bcher-kva.de/');
  });

  it('never returns a control character, whatever the input', () => {
    for (const input of [
      'https://x.test/a\r\nSet-Cookie: a=b',
      'not a url ✓',
      'https://x.test/\u{1F600}',
      '\ud800',
    ]) {
      expect(locationOf(input)).toMatch(/^[\x21-\x7e]+$/);
    }
  });
});
