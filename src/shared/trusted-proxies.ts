// Which proxies in front of Pigeon may tell it the client's address (TRUST_PROXY), and so which
// X-Forwarded-For entries it believes: only those added by a trusted hop, counted from the right, since
// every entry to their left is whatever the client sent. Both servers (the API through Fastify's
// `trustProxy`, the short links through links/client-ip.ts) read the client's address this one way.
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * `hops`: that many proxies in front, each appending the address it saw (the client is the `hops`-th entry
 * from the right). `proxies`: the proxies' own addresses; the client is the rightmost entry not among them.
 */
export type ProxyTrust = { hops: number } | { proxies: BlockList };

const maxHops = 10;

/** Named sets of proxy addresses, as the reverse-proxy guides name them. */
const namedSubnets: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  private: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
};

export const trustProxyForms =
  "`false`; a number of proxies in front (1 to 10; `true` means 1); or the proxies' addresses, comma-separated (`10.0.0.5`, `10.0.0.0/8`, `::1`, `loopback`, `private`)";

/** Parses TRUST_PROXY; throws an Error saying which entry is wrong and what the forms are. */
export function parseTrustProxy(value: string): ProxyTrust {
  const text = value.trim().toLowerCase();
  if (text === '' || text === 'false' || text === '0') return { hops: 0 };
  // One proxy in front: its own entry (the rightmost) is the client, never what the client wrote before it.
  if (text === 'true') return { hops: 1 };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > maxHops) throw new Error(`${value} proxies is more than ${maxHops}: use ${trustProxyForms}`);
    return { hops };
  }
  const proxies = new BlockList();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    const named = namedSubnets[entry];
    if (named) {
      for (const [network, prefix, type] of named) proxies.addSubnet(network, prefix, type);
      continue;
    }
    const [address, prefixText, extra] = entry.split('/');
    const type = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
    const bits = type === 'ipv4' ? 32 : 128;
    const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
    if (!type || extra !== undefined || prefix < 0 || prefix > bits) {
      throw new Error(`"${entry}" is not an address, a network or a name: use ${trustProxyForms}`);
    }
    proxies.addSubnet(address, prefix, type);
  }
  return { proxies };
}

/** `::ffff:1.2.3.4` (how a dual-stack socket shows an IPv4 peer) as `1.2.3.4`. */
const unmapped = (address: string): string =>
  address.toLowerCase().startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;

/**
 * Whether the address at `hop` (0 the socket's peer, 1 the rightmost X-Forwarded-For entry, …) is a trusted
 * proxy, whose X-Forwarded-For entry to the left is then believed. Fastify's `trustProxy` takes this form.
 */
export function trusts(trust: ProxyTrust, address: string, hop: number): boolean {
  if ('hops' in trust) return hop < trust.hops;
  const plain = unmapped(address);
  if (isIPv4(plain)) return trust.proxies.check(plain, 'ipv4');
  if (isIPv6(plain)) return trust.proxies.check(plain, 'ipv6');
  return false;
}

/** Fastify's `trustProxy` for this trust: false when nothing is trusted. */
export const fastifyTrustProxy = (trust: ProxyTrust) =>
  'hops' in trust && trust.hops === 0 ? false : (address: string, hop: number) => trusts(trust, address, hop);
