// Token and password material: tokens are shown once and stored only as a SHA-256 hash.
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { promisify } from 'node:util';
import { randomBase62 } from '../shared/ids.ts';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** 43 base62 characters: 256 bits. */
export const newToken = (): string => randomBase62(43)[0];

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, 32);
  return `scrypt$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length);
  return timingSafeEqual(expected, actual);
}

/** Validates one allowed_ips entry: an IPv4/IPv6 address or a CIDR block. */
export function isIpOrCidr(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

const unmapIpv4 = (ip: string) => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

/** True when the client address is inside one of the allowed entries. */
export function ipAllowed(clientIp: string, allowed: string[]): boolean {
  const ip = unmapIpv4(clientIp);
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  for (const entry of allowed) {
    const [address, prefix] = entry.split('/');
    const entryFamily = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, entryFamily);
    else list.addSubnet(address, Number(prefix), entryFamily);
  }
  return list.check(ip, family);
}
