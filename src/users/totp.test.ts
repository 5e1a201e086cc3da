// The one-time passwords match the RFCs' own test vectors, and a code is accepted once, within a step.
import { describe, expect, it } from 'vitest';
import {
  base32Decode,
  base32Encode,
  hotp,
  newRecoveryCodes,
  otpauthUri,
  recoveryCodeHash,
  totp,
  verifyTotp,
} from './totp.ts';

const rfcSecret = Buffer.from('12345678901234567890', 'ascii');

describe('HOTP and TOTP', () => {
  it("gives RFC 4226's HOTP values (appendix D)", () => {
    const expected = [
      '755224',
      '287082',
      '359152',
      '969429',
      '338314',
      '254676',
      '287922',
      '162583',
      '399871',
      '520489',
    ];
    expect(expected.map((_, counter) => hotp(rfcSecret, counter))).toEqual(expected);
  });

  it("gives RFC 6238's TOTP values for SHA-1 (appendix B, 8 digits)", () => {
    const vectors: [number, string][] = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ];
    for (const [seconds, code] of vectors) expect(totp(rfcSecret, seconds * 1000, 8)).toBe(code);
  });

  it('accepts the current code and one step either side, each once, and nothing else', () => {
    const now = 1_700_000_000_000;
    const step = Math.floor(now / 30_000);
    const current = totp(rfcSecret, now);
    expect(verifyTotp(rfcSecret, current, now)).toBe(step);
    expect(verifyTotp(rfcSecret, totp(rfcSecret, now - 30_000), now)).toBe(step - 1);
    expect(verifyTotp(rfcSecret, totp(rfcSecret, now + 30_000), now)).toBe(step + 1);
    expect(verifyTotp(rfcSecret, totp(rfcSecret, now - 60_000), now)).toBeUndefined();
    // Used once: the same code, or an older one, is refused afterwards.
    expect(verifyTotp(rfcSecret, current, now, step)).toBeUndefined();
    expect(verifyTotp(rfcSecret, totp(rfcSecret, now - 30_000), now, step)).toBeUndefined();
    expect(verifyTotp(rfcSecret, 'abcdef', now)).toBeUndefined();
    expect(verifyTotp(rfcSecret, '1234567', now)).toBeUndefined();
    expect(verifyTotp(rfcSecret, `${current.slice(0, 3)} ${current.slice(3)}`, now)).toBe(step);
  });
});

describe('base32, the URI and recovery codes', () => {
  it('round-trips base32 as RFC 4648 spells it', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('mzxw6ytboi======')?.toString()).toBe('foobar');
    expect(base32Decode('MZXW 6YTB OI')?.toString()).toBe('foobar');
    expect(base32Decode('MZ1W')).toBeUndefined();
  });

  it('writes the otpauth URI authenticator apps read', () => {
    const uri = otpauthUri({ issuer: 'Pigeon', account: 'ann@example.com', secret: rfcSecret });
    expect(uri).toBe(
      'otpauth://totp/Pigeon%3Aann%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Pigeon&algorithm=SHA1&digits=6&period=30',
    );
  });

  it('makes distinct recovery codes whose hash ignores case and dashes', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    expect(recoveryCodeHash(codes[0].toUpperCase().replace('-', ' '))).toBe(recoveryCodeHash(codes[0]));
  });
});
