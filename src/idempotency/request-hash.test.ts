import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, requestHash } from './request-hash.ts';

describe('request hash', () => {
  it('the same request with its keys in another order hashes the same', () => {
    const a = { sms: { message: { text: 'Hi', pushtype: 'alert' }, recipients: { gsm: [{ value: '1' }] } } };
    const b = { sms: { recipients: { gsm: [{ value: '1' }] }, message: { pushtype: 'alert', text: 'Hi' } } };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(requestHash('POST /send', a)).toBe(requestHash('POST /send', b));
  });

  it('an absent optional field and an undefined one are the same request', () => {
    expect(requestHash('POST /send', { text: 'Hi', delay: undefined })).toBe(
      requestHash('POST /send', { text: 'Hi' }),
    );
  });

  it('another value, another array order, another type or another route is another request', () => {
    const base = requestHash('POST /send', { text: 'Hi', to: ['1', '2'], unicode: 1 });
    expect(requestHash('POST /send', { text: 'Ho', to: ['1', '2'], unicode: 1 })).not.toBe(base);
    expect(requestHash('POST /send', { text: 'Hi', to: ['2', '1'], unicode: 1 })).not.toBe(base);
    expect(requestHash('POST /send', { text: 'Hi', to: ['1', '2'], unicode: '1' })).not.toBe(base);
    expect(requestHash('GET /send', { text: 'Hi', to: ['1', '2'], unicode: 1 })).not.toBe(base);
  });

  it('a value holding a separator cannot pass for two fields', () => {
    expect(canonicalJson({ a: 'x","b":"y' })).not.toBe(canonicalJson({ a: 'x', b: 'y' }));
  });
});

describe('request hash of a large request', () => {
  it('hashes what it would hash of the whole canonical string, in pieces', () => {
    const payload = { recipients: Array.from({ length: 20_000 }, (_, i) => ({ value: `3361234${i}` })) };
    const whole = createHash('sha256').update('POST /send\n').update(canonicalJson(payload)).digest('hex');
    expect(requestHash('POST /send', payload)).toBe(whole);
  });
});
