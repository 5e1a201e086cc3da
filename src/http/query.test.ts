import { describe, expect, it } from 'vitest';
import { parseQuery } from './query.ts';

describe('parseQuery', () => {
  it('reads plain keys as node does: one value a string, a repeated key an array', () => {
    expect(parseQuery('to=336&text=hi%20there&links=a&links=b')).toEqual({
      to: '336',
      text: 'hi there',
      links: ['a', 'b'],
    });
  });

  it('folds PHP array keys into the plain key: [N] in the order of N, [] in the order given', () => {
    expect(parseQuery('links%5B1%5D=b&links%5B0%5D=a')).toEqual({ links: ['a', 'b'] });
    expect(parseQuery('links[]=a&links[]=b&to=1')).toEqual({ links: ['a', 'b'], to: '1' });
    expect(parseQuery('links[]=only')).toEqual({ links: ['only'] });
    expect(parseQuery('links=first&links[0]=second')).toEqual({ links: ['first', 'second'] });
  });

  it('leaves nested forms and lone brackets as they came', () => {
    expect(parseQuery('a[b][c]=1&[]=2')).toEqual({ 'a[b][c]': '1', '[]': '2' });
  });
});
