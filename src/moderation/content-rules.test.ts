import { describe, expect, it } from 'vitest';
import { type ContentRule, catastrophicReason, compileRules, normalizeRule } from './content-rules.ts';

const rule = (
  id: number,
  kind: ContentRule['kind'],
  value: string,
  action: ContentRule['action'],
): ContentRule => ({
  id,
  accountId: null,
  ...normalizeRule(kind, value, action),
});

describe('content rules', () => {
  it('a blocked domain matches its subdomains, in the text or a <-short-> target, and nothing else', () => {
    const match = compileRules([rule(1, 'domain', 'https://Evil.example/', 'refuse')])!;
    expect(match('see www.evil.example/x', [])?.found).toBe('www.evil.example');
    expect(match('click <-short->', ['https://a.b.evil.example/path'])?.found).toBe('a.b.evil.example');
    expect(match('see notevil.example and evil.example.org', [])).toBeUndefined();
  });

  it('finds hosts in a long hostile text in linear time, and in addresses and ports', () => {
    const match = compileRules([rule(1, 'domain', 'evil.example', 'refuse')])!;
    expect(match(`${'a.'.repeat(20_000)}a`, [])).toBeUndefined();
    expect(match('write to bob@mail.evil.example', [])?.found).toBe('mail.evil.example');
    expect(match('http://evil.example:8080/x.', [])?.found).toBe('evil.example');
  });

  it('a word matches whole, without case or accents; a refusal wins over a hold', () => {
    const match = compileRules([
      rule(1, 'word', 'casino', 'hold'),
      rule(2, 'word', 'free  money', 'refuse'),
    ])!;
    expect(match('Le CASINÒ ouvre', [])?.rule.id).toBe(1);
    expect(match('casinos everywhere', [])).toBeUndefined();
    expect(match('casino and FREE money', [])?.rule.id).toBe(2);
  });

  it('a pattern is a regular expression without case', () => {
    const match = compileRules([rule(3, 'pattern', 'bit\\.ly/\\w+', 'hold')])!;
    expect(match('go to BIT.LY/abc', [])?.found).toBe('BIT.LY/abc');
  });

  it('refuses catastrophic, invalid and overlong patterns', () => {
    expect(catastrophicReason('(a+)+$')).toMatch(/nested quantifier/);
    expect(catastrophicReason('(a|aa)*')).toMatch(/nested quantifier/);
    expect(catastrophicReason('((ab)*c)+')).toMatch(/nested quantifier/);
    expect(catastrophicReason('(a)\\1')).toMatch(/backreference/);
    expect(catastrophicReason('[(+]+x(ab)?c{2,3}')).toBeUndefined();
    expect(() => normalizeRule('pattern', '(x+)*y', 'hold')).toThrow(/exponential/);
    expect(() => normalizeRule('pattern', '([a-z', 'hold')).toThrow(/not a valid regular expression/);
    expect(() => normalizeRule('pattern', 'a'.repeat(201), 'hold')).toThrow(/at most 200/);
    expect(() => normalizeRule('domain', 'not a domain', 'hold')).toThrow(/not a domain/);
    expect(() => normalizeRule('word', 'x', 'drop')).toThrow(/action "drop"/);
  });

  it('among many rules, the one that matches is named, and a text that breaks none passes', () => {
    const many: ContentRule[] = [];
    for (let i = 0; i < 30; i++) {
      many.push(
        rule(
          i + 1,
          (['word', 'domain', 'pattern'] as const)[i % 3],
          [`blocked${i}`, `blocked${i}.example`, `free\\s+prize\\s+${i}`][i % 3],
          i % 2 === 0 ? 'refuse' : 'hold',
        ),
      );
    }
    const match = compileRules(many)!;
    expect(match('Your order shipped, see https://shop.example/o', [])).toBeUndefined();
    expect(match('Win a FREE   prize 5 now', [])).toMatchObject({ rule: { id: 6 }, found: 'FREE   prize 5' });
    expect(match('Blocked27 and Blocked3', [])?.rule.id).toBe(4);
    expect(match('see www.x.blocked13.example', [])?.rule.id).toBe(14);
    expect(match('text', ['https://blocked1.example/x'])?.rule.id).toBe(2);
  });

  it('no rule compiles to nothing to run', () => {
    expect(compileRules([])).toBeUndefined();
  });
});
