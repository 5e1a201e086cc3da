import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { parseTrustProxy } from '../shared/trusted-proxies.ts';
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

describe('clientAddress honours X-Forwarded-For only as far as trusted proxies added it', () => {
  const none = parseTrustProxy('false');
  const one = parseTrustProxy('true');

  it('ignores the header when no proxy is trusted', () => {
    expect(clientAddress('10.0.0.1', '203.0.113.9', none)).toBe('10.0.0.1');
  });

  it('takes the entry the trusted hop added (the rightmost), never what the client wrote before it', () => {
    expect(clientAddress('10.0.0.1', '203.0.113.9, 10.0.0.2', one)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.1', ' 2001:db8::5 ', one)).toBe('2001:db8::5');
    expect(clientAddress('10.0.0.1', ['192.0.2.66', '203.0.113.9'], one)).toBe('203.0.113.9');
    // Two proxies in front: the second entry from the right.
    expect(clientAddress('10.0.0.1', '192.0.2.66, 203.0.113.9, 10.0.0.2', parseTrustProxy('2'))).toBe(
      '203.0.113.9',
    );
  });

  it('with the proxies named by address, walks left past them only', () => {
    const named = parseTrustProxy('10.0.0.0/8, ::1');
    expect(clientAddress('10.0.0.1', '192.0.2.66, 203.0.113.9, 10.0.0.2', named)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:10.0.0.1', '203.0.113.9', named)).toBe('203.0.113.9');
    // A peer that is not a named proxy is the client, whatever it claims.
    expect(clientAddress('198.51.100.4', '203.0.113.9', named)).toBe('198.51.100.4');
  });

  it('strips a port that some proxies append', () => {
    expect(clientAddress('10.0.0.1', '203.0.113.9:5123', one)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.1', '[2001:db8::5]:443', one)).toBe('2001:db8::5');
  });

  it('stops at the hop that added an entry that is not an address, and without the header at the peer', () => {
    expect(clientAddress('10.0.0.1', 'unknown', one)).toBe('10.0.0.1');
    expect(clientAddress('10.0.0.1', undefined, one)).toBe('10.0.0.1');
  });
});

describe('TRUST_PROXY', () => {
  it("is false, a number of proxies (true is one), or the proxies' addresses; anything else is named", () => {
    expect(parseTrustProxy('false')).toEqual({ hops: 0 });
    expect(parseTrustProxy('true')).toEqual({ hops: 1 });
    expect(parseTrustProxy('3')).toEqual({ hops: 3 });
    expect(() => parseTrustProxy('11')).toThrow(/more than 10/);
    expect(() => parseTrustProxy('10.0.0.0/33')).toThrow(
      /"10.0.0.0\/33" is not an address, a network or a name/,
    );
    expect(() => parseTrustProxy('yes')).toThrow(/a number of proxies in front/);
  });

  it('a wrong value stops the configuration, naming the variable and its forms', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(
      /TRUST_PROXY: "yes" is not an address, a network or a name: use `false`; a number of proxies in front/,
    );
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe('true');
  });
});
