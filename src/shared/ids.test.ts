import { describe, expect, it } from 'vitest';
import { randomBase62 } from './ids.ts';

describe('randomBase62', () => {
  it('draws each string from bytes no other string used: small draws across many refills are all distinct', () => {
    // 20,000 single draws of 7 characters take some 25 bytes each: about sixty refills of the pool.
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const [code] = randomBase62(7);
      expect(code).toMatch(/^[0-9A-Za-z]{7}$/);
      seen.add(code);
    }
    // 62^7 codes: a repeat among 20,000 is a one-in-ten-thousand event unless bytes were handed out twice.
    expect(seen.size).toBeGreaterThan(19_990);
  });

  it('a large draw (a campaign) comes whole: as many strings as asked, uniform over the alphabet', () => {
    const codes = randomBase62(7, 50_000);
    expect(codes).toHaveLength(50_000);
    expect(new Set(codes).size).toBeGreaterThan(49_990);
    const counts = new Map<string, number>();
    for (const code of codes) for (const ch of code) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 350,000 characters over 62: about 5,645 each; a skew past 10 % would show a bias.
    for (const n of counts.values()) expect(Math.abs(n / (350_000 / 62) - 1)).toBeLessThan(0.1);
  });
});
