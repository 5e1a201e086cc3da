// Which address a click came from, and how much of it Pigeon keeps: a click is stored with its network
// (IPv4 /24, IPv6 /48), never the full address, so clicks can be told apart by region or operator
// without storing personal data that identifies one subscriber.
import { isIPv4, isIPv6 } from 'node:net';
import { type ProxyTrust, trusts } from '../shared/trusted-proxies.ts';

/**
 * The client's address: the socket peer, or, behind trusted proxies (TRUST_PROXY), the rightmost
 * X-Forwarded-For entry not added by one of them, as Fastify's `trustProxy` gives the API `request.ip`
 * with the same trust, so both servers agree. Entries further left are whatever the client sent and are
 * never believed. An entry that is not an address stops the walk at the hop that added it.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trust: ProxyTrust,
): string | undefined {
  if (socketAddress === undefined || forwardedFor === undefined) return socketAddress;
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
  const entries = header
    .split(',')
    .map((entry) => stripPort(entry.trim()))
    .reverse();
  let address = socketAddress;
  for (let hop = 0; hop < entries.length && trusts(trust, address, hop); hop++) {
    const next = entries[hop];
    if (!isIPv4(next) && !isIPv6(stripZone(next))) break;
    address = next;
  }
  return address;
}

/** Removes a port some proxies append: `1.2.3.4:5678`, `[2001:db8::1]:443`. */
function stripPort(value: string): string {
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end === -1 ? value : value.slice(1, end);
  }
  const colon = value.indexOf(':');
  if (colon !== -1 && colon === value.lastIndexOf(':') && value.indexOf('.') !== -1)
    return value.slice(0, colon);
  return value;
}

const stripZone = (value: string): string => {
  const percent = value.indexOf('%');
  return percent === -1 ? value : value.slice(0, percent);
};

/**
 * The stored form of an address: IPv4 with its last octet zeroed (/24), IPv6 cut to its first 48 bits,
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`, how a dual-stack socket reports IPv4 peers) treated as IPv4.
 * Anything that is not an address gives null.
 */
export function truncateIp(address: string | undefined): string | null {
  if (address === undefined) return null;
  if (isIPv4(address)) return truncateIPv4(address);
  const v6 = stripZone(address);
  if (!isIPv6(v6)) return null;
  const groups = parseIPv6(v6);
  const mapped = groups[5] === 0xffff && groups[0] === 0 && groups[1] === 0 && groups[2] === 0;
  if (mapped && groups[3] === 0 && groups[4] === 0) {
    return `${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.0`;
  }
  return formatIPv6([groups[0], groups[1], groups[2], 0, 0, 0, 0, 0]);
}

function truncateIPv4(address: string): string {
  const dot = address.lastIndexOf('.');
  return `${address.slice(0, dot)}.0`;
}

/** Eight 16-bit groups of an address already validated by isIPv6 (with an optional dotted IPv4 tail). */
function parseIPv6(address: string): number[] {
  let text = address;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const double = text.indexOf('::');
  const toGroups = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  if (double === -1) return toGroups(text);
  const head = toGroups(text.slice(0, double));
  const rest = toGroups(text.slice(double + 2));
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

/** RFC 5952 text: lowercase hex, the longest run of two or more zero groups (the first on a tie) as `::`. */
function formatIPv6(groups: number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
