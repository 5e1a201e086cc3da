// The SSRF guard on its own: which addresses are refused, in every spelling a URL can give them, through
// DNS answers, and at connection time; then at creation through the API (-7 naming the reason).
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  createUrlGuard,
  literalAddress,
  nonPublicReason,
  type Resolve,
} from '../../src/webhooks/url-guard.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

const noDns: Resolve = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

/** A resolver answering from a table; unknown names do not resolve. */
const table =
  (answers: Record<string, string[]>): Resolve =>
  async (host) => {
    const found = answers[host];
    if (!found) return noDns(host);
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('nonPublicReason', () => {
  it('accepts public unicast IPv4 and IPv6 addresses', () => {
    for (const ip of [
      '93.184.216.34',
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '2a00:1450:4007:80f::200e',
    ]) {
      expect(nonPublicReason(ip), ip).toBeUndefined();
    }
  });

  it('refuses every non-public range, naming it', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', 'a loopback address'],
      ['127.255.255.254', 'a loopback address'],
      ['10.1.2.3', 'a private address'],
      ['172.16.0.1', 'a private address'],
      ['172.31.255.255', 'a private address'],
      ['192.168.1.1', 'a private address'],
      ['169.254.169.254', 'a link-local address'],
      ['100.64.0.1', 'a carrier-grade NAT (CGNAT) address'],
      ['100.127.255.254', 'a carrier-grade NAT (CGNAT) address'],
      ['224.0.0.1', 'a multicast address'],
      ['239.255.255.250', 'a multicast address'],
      ['0.0.0.0', 'the unspecified address'],
      ['0.1.2.3', 'the unspecified address'],
      ['255.255.255.255', 'the broadcast address'],
      ['192.0.2.1', 'a reserved address'],
      ['240.0.0.1', 'a reserved address'],
      ['::1', 'a loopback address'],
      ['::', 'the unspecified address'],
      ['fe80::1', 'a link-local address'],
      ['fc00::1', 'a unique-local address'],
      ['fd12:3456:789a::1', 'a unique-local address'],
      ['ff02::1', 'a multicast address'],
      ['2001:db8::1', 'a reserved address'],
    ];
    for (const [ip, reason] of cases) expect(nonPublicReason(ip), ip).toBe(reason);
  });

  it('judges IPv4-mapped IPv6 by the IPv4 address it carries, and refuses IPv6 forms embedding IPv4', () => {
    expect(nonPublicReason('::ffff:127.0.0.1')).toBe('a loopback address');
    expect(nonPublicReason('::ffff:7f00:1')).toBe('a loopback address');
    expect(nonPublicReason('::ffff:10.0.0.1')).toBe('a private address');
    expect(nonPublicReason('::ffff:169.254.169.254')).toBe('a link-local address');
    expect(nonPublicReason('::ffff:8.8.8.8')).toBeUndefined();
    // IPv4-compatible (deprecated), NAT64, 6to4 and Teredo can all lead back to an unchecked IPv4 address.
    expect(nonPublicReason('::127.0.0.1')).toBeDefined();
    expect(nonPublicReason('64:ff9b::7f00:1')).toBeDefined();
    expect(nonPublicReason('2002:7f00:1::1')).toBeDefined();
    expect(nonPublicReason('2001:0:4136:e378::1')).toBeDefined();
  });
});

describe('URL guard', () => {
  const guard = createUrlGuard({ allowPrivate: false, resolve: noDns });

  it('reads IP literals in every form a URL can spell them', () => {
    const literals: [string, string][] = [
      ['http://2130706433/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
      ['http://0x7f000001/', '127.0.0.1'],
      ['http://0177.0.0.1/', '127.0.0.1'],
      ['http://127.1/', '127.0.0.1'],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
      ['http://[0:0:0:0:0:0:0:1]:8080/x', '::1'],
    ];
    for (const [url, address] of literals) expect(literalAddress(new URL(url)), url).toBe(address);
    expect(literalAddress(new URL('https://hooks.example.com/'))).toBeUndefined();
  });

  it('refuses non-public literals however they are written', async () => {
    const refused: [string, string][] = [
      ['http://127.0.0.1:8080/hook', 'targets 127.0.0.1, a loopback address'],
      ['http://2130706433/', 'targets 127.0.0.1, a loopback address'],
      ['http://0x7f.1/', 'targets 127.0.0.1, a loopback address'],
      ['http://0177.0.0.1/', 'targets 127.0.0.1, a loopback address'],
      ['http://[::1]/', 'targets ::1, a loopback address'],
      ['http://[::ffff:127.0.0.1]/', 'targets ::ffff:7f00:1, a loopback address'],
      ['http://[::ffff:a00:1]/', 'targets ::ffff:a00:1, a private address'],
      ['http://10.0.0.1/', 'targets 10.0.0.1, a private address'],
      ['http://172.16.5.4/', 'targets 172.16.5.4, a private address'],
      ['https://192.168.0.10/', 'targets 192.168.0.10, a private address'],
      ['http://169.254.169.254/latest/meta-data/', 'targets 169.254.169.254, a link-local address'],
      ['http://[fe80::1]/', 'targets fe80::1, a link-local address'],
      ['http://[fd00::1]/', 'targets fd00::1, a unique-local address'],
      ['http://100.64.1.1/', 'targets 100.64.1.1, a carrier-grade NAT (CGNAT) address'],
      ['http://224.0.0.251/', 'targets 224.0.0.251, a multicast address'],
      ['http://[ff02::1]/', 'targets ff02::1, a multicast address'],
      ['http://0.0.0.0/', 'targets 0.0.0.0, the unspecified address'],
      ['http://[::]/', 'targets ::, the unspecified address'],
      ['http://255.255.255.255/', 'targets 255.255.255.255, the broadcast address'],
    ];
    for (const [url, reason] of refused) {
      expect(await guard.check(url), url).toBe(`${reason}; only public addresses are allowed`);
    }
    expect(await guard.check('https://93.184.216.34/hook')).toBeUndefined();
    expect(await guard.check('https://[2606:4700::6810:85e5]/hook')).toBeUndefined();
  });

  it('refuses a name when any of its DNS answers is not public, and localhost without asking DNS', async () => {
    const resolving = createUrlGuard({
      allowPrivate: false,
      resolve: table({
        'public.test': ['93.184.216.34', '2606:4700::6810:85e5'],
        'inside.test': ['10.0.0.7'],
        'mixed.test': ['93.184.216.34', '127.0.0.1'],
        'mapped.test': ['::ffff:192.168.1.1'],
        localhost: ['93.184.216.34'],
      }),
    });
    expect(await resolving.check('https://public.test/hook')).toBeUndefined();
    expect(await resolving.check('https://inside.test/hook')).toBe(
      'host inside.test resolves to 10.0.0.7, a private address; only public addresses are allowed',
    );
    expect(await resolving.check('https://mixed.test/hook')).toBe(
      'host mixed.test resolves to 127.0.0.1, a loopback address; only public addresses are allowed',
    );
    expect(await resolving.check('https://mapped.test/hook')).toBe(
      'host mapped.test resolves to ::ffff:192.168.1.1, a private address; only public addresses are allowed',
    );
    expect(await resolving.check('http://localhost:8080/')).toBe(
      'host localhost is a loopback name; only public addresses are allowed',
    );
    expect(await resolving.check('http://api.localhost/')).toBe(
      'host api.localhost is a loopback name; only public addresses are allowed',
    );
    // Not resolvable now: accepted when stored, and checked again at every connection.
    expect(await resolving.check('https://not-yet.test/hook')).toBeUndefined();
  });

  it('the connect-time lookup resolves on every call, refuses non-public answers, and hands back the checked ones', async () => {
    let answer = ['93.184.216.34'];
    const rebinding = createUrlGuard({
      allowPrivate: false,
      resolve: async () => answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    });
    const lookup = rebinding.lookup!;
    const one = (options: object) =>
      new Promise<{ error: Error | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
        lookup('hooks.test', options, (error, address, family) => resolve({ error, address, family })),
      );
    expect(await one({ all: true })).toMatchObject({
      error: null,
      address: [{ address: '93.184.216.34', family: 4 }],
    });
    expect(await one({})).toMatchObject({ error: null, address: '93.184.216.34', family: 4 });
    // The name now answers a loopback address (DNS rebinding): the connection is refused, not made.
    answer = ['127.0.0.1'];
    const refused = await one({ all: true });
    expect(refused.error?.message).toBe('host hooks.test resolves to 127.0.0.1, a loopback address');
    expect((refused.error as { code?: string }).code).toBe('ERR_URL_GUARD');
  });

  it('WEBHOOK_ALLOW_PRIVATE lets every target through and leaves resolution to the system', async () => {
    const open = createUrlGuard({ allowPrivate: true, resolve: noDns });
    expect(await open.check('http://127.0.0.1:8080/')).toBeUndefined();
    expect(await open.check('http://localhost/')).toBeUndefined();
    expect(() => open.checkLiteral(new URL('http://[::1]/'))).not.toThrow();
    expect(open.lookup).toBeUndefined();
    expect(() => guard.checkLiteral(new URL('http://2130706433/'))).toThrow(
      '127.0.0.1 is a loopback address',
    );
  });
});

describeEachDialect('webhook URL guard at creation', (h) => {
  it('POST and PUT /webhook refuse non-public targets with -7 naming the address and the range', async () => {
    const a = await h().account();
    const cases: [string, string][] = [
      ['http://127.0.0.1:9000/hook', 'webhook.url targets 127.0.0.1, a loopback address'],
      ['http://2130706433/', 'webhook.url targets 127.0.0.1, a loopback address'],
      ['http://0x7f.1/', 'webhook.url targets 127.0.0.1, a loopback address'],
      ['http://[::ffff:127.0.0.1]/', 'webhook.url targets ::ffff:7f00:1, a loopback address'],
      ['http://192.168.1.20/', 'webhook.url targets 192.168.1.20, a private address'],
      ['http://169.254.169.254/', 'webhook.url targets 169.254.169.254, a link-local address'],
      ['http://localhost:8080/', 'webhook.url host localhost is a loopback name'],
    ];
    for (const [url, details] of cases) {
      const r = await call(h().app, 'POST', '/webhook', {
        token: a.token,
        json: { webhook: { type: 'DLR', url } },
      });
      expect(r.body).toEqual({
        status: -7,
        message: 'Data error',
        details: `${details}; only public addresses are allowed`,
      });
    }
    const created = await call(h().app, 'POST', '/webhook', {
      token: a.token,
      json: { webhook: { type: 'DLR', url: 'https://93.184.216.34/hook' } },
    });
    expect(created.body.status).toBe(1);
    const id = created.body.webhook.webhook_id;
    const moved = await call(h().app, 'PUT', `/webhook/${id}`, {
      token: a.token,
      xml: '<webhook><url>http://[fd00::5]/hook</url></webhook>',
    });
    expect(moved.body).toMatchObject({
      status: '-7',
      details: 'webhook.url targets fd00::5, a unique-local address; only public addresses are allowed',
    });
    const kept = await call(h().app, 'GET', `/webhook/${id}`, { token: a.token });
    expect(kept.body.webhook.url).toBe('https://93.184.216.34/hook');
  });
});

describeEachDialect(
  'webhook URL guard off (WEBHOOK_ALLOW_PRIVATE=true)',
  (h) => {
    it('POST /webhook accepts loopback targets', async () => {
      const a = await h().account();
      const r = await call(h().app, 'POST', '/webhook', {
        token: a.token,
        json: { webhook: { type: 'MO', url: 'http://127.0.0.1:9000/hook' } },
      });
      expect(r.body.status).toBe(1);
    });
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);
