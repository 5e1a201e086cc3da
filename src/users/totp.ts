// Time-based one-time passwords for the console's two-factor sign-in: HOTP (RFC 4226) over the time step of
// TOTP (RFC 6238), with SHA-1, 6 digits and 30-second steps, which every authenticator app reads from an
// `otpauth://` URI. The secret is 20 random bytes, shown once in base32 (RFC 4648).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Base32 without padding, as authenticator apps read it. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** Reads base32, any case, spaces and padding ignored; undefined when a character is not base32. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = alphabet.indexOf(char);
    if (index < 0) return undefined;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The HOTP value of `counter` (RFC 4226, section 5.3), `digits` long with leading zeros. */
export function hotp(secret: Uint8Array, counter: number, digits = 6): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

export const totpStepSeconds = 30;

/** The time step an instant falls in. */
export const timeStep = (nowMs: number) => Math.floor(nowMs / 1000 / totpStepSeconds);

/** The TOTP value at `nowMs` (RFC 6238). */
export function totp(secret: Uint8Array, nowMs: number, digits = 6): string {
  return hotp(secret, timeStep(nowMs), digits);
}

/**
 * The time step a code was made for, when it matches the current step or one either side (a clock 30 s off,
 * or a code typed as it changed), and comes after `lastStep`: a code is accepted once. Undefined otherwise.
 */
export function verifyTotp(
  secret: Uint8Array,
  code: string,
  nowMs: number,
  lastStep: number | null = null,
): number | undefined {
  const given = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(given)) return undefined;
  const current = timeStep(nowMs);
  for (const step of [current - 1, current, current + 1]) {
    if (lastStep !== null && step <= lastStep) continue;
    if (timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(given))) return step;
  }
  return undefined;
}

/** A new secret: 20 random bytes (160 bits, RFC 4226's recommended length). */
export const newTotpSecret = () => randomBytes(20);

/** The URI an authenticator app reads (as a QR code or pasted): `otpauth://totp/Issuer:account?…`. */
export function otpauthUri(options: { issuer: string; account: string; secret: Uint8Array }): string {
  const label = encodeURIComponent(`${options.issuer}:${options.account}`);
  const query = new URLSearchParams({
    secret: base32Encode(options.secret),
    issuer: options.issuer,
    algorithm: 'SHA1',
    digits: '6',
    period: String(totpStepSeconds),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}

/**
 * Recovery codes: `count` codes of 10 base32 characters (50 random bits), shown once as `xxxxx-xxxxx`. They are
 * random, not chosen by a person, so a SHA-256 of each is enough to store them.
 */
export function newRecoveryCodes(count = 10): string[] {
  return Array.from({ length: count }, () => {
    const code = base32Encode(randomBytes(7)).slice(0, 10).toLowerCase();
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** What is stored of a recovery code: the SHA-256 of its characters, any case, dash and spaces ignored. */
export const recoveryCodeHash = (code: string) =>
  createHash('sha256').update(code.replace(/[\s-]/g, '').toLowerCase()).digest('hex');
