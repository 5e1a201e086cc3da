import { describe, expect, it } from 'vitest';
import { clientAddress, truncateIp } from './client-ip.ts';

describe('truncateIp keeps only the network of an address', () => {
  it('IPv4 keeps its /24', () => {
    expect(truncateIp('203.0.113.77')).toBe('203.0.113.0');
    expect(truncateIp('10.1.2.3')).toBe('10.1.2.0');
  });

  it('IPv4-mapped IPv6 is treated as IPv4', () => {
    expect(truncateIp('::ffff:198.51.100.23')).toBe('198.51.100.0');
    expect(truncateIp('::FFFF:c633:6417')).toBe('198.51.100.0');
  });

  it('IPv6 keeps its /48, in RFC 5952 form', () => {
    expect(truncateIp('2001:db8:abcd:12:34:56:78:9a')).toBe('2001:db8:abcd::');
    expect(truncateIp('2001:DB8:0:1::1')).toBe('2001:db8::');
    expect(truncateIp('::1')).toBe('::');
    expect(truncateIp('fe80::1%eth0')).toBe('fe80::');
    expect(truncateIp('2a01:e0a:1f:2:3:4:5:6')).toBe('2a01:e0a:1f::');
  });

  it('an IPv6 address with an embedded IPv4 tail that is not mapped stays IPv6', () => {
    expect(truncateIp('64:ff9b:1::192.0.2.33')).toBe('64:ff9b:1::');
  });

  it('anything that is not an address gives null', () => {
    expect(truncateIp(undefined)).toBeNull();
    expect(truncateIp('')).toBeNull();
    expect(truncateIp('not-an-ip')).toBeNull();
    expect(truncateIp('999.1.1.1')).toBeNull();
  });
});

describe('clientAddress honours X-Forwarded-For only behind a trusted proxy', () => {
  it('ignores the header when the proxy is not trusted', () => {
    expect(clientAddress('10.0.0.1', '203.0.113.9', false)).toBe('10.0.0.1');
  });

  it('takes the leftmost entry when trusted, as the API does', () => {
    expect(clientAddress('10.0.0.1', '203.0.113.9, 10.0.0.2', true)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.1', ' 2001:db8::5 ', true)).toBe('2001:db8::5');
  });

  it('strips a port that some proxies append', () => {
    expect(clientAddress('10.0.0.1', '203.0.113.9:5123', true)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.1', '[2001:db8::5]:443', true)).toBe('2001:db8::5');
  });

  it('falls back to the socket peer when the header is junk or absent', () => {
    expect(clientAddress('10.0.0.1', 'unknown', true)).toBe('10.0.0.1');
    expect(clientAddress('10.0.0.1', undefined, true)).toBe('10.0.0.1');
  });
});
