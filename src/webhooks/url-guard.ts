// The SSRF guard of webhook URLs: a webhook may only reach public unicast addresses, so an account cannot
// make Pigeon probe its own host or network. Checked when a webhook is created or changed, and again at
// every connection: the HTTP client resolves names through `lookup` below, which refuses the connection
// when any answer is not public and hands the checked addresses to the socket, so a name that changes its
// answers between the check and the connection (DNS rebinding) still cannot reach a private address.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A connection the guard refused; `code` lets the sender tell it from a network failure. */
export class UrlGuardError extends Error {
  readonly code = 'ERR_URL_GUARD';
}

const rangeNames: Record<string, string> = {
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (CGNAT) address',
  private: 'a private address',
  uniqueLocal: 'a unique-local address',
  reserved: 'a reserved address',
};

/**
 * Why an IP address is not a public unicast one, or undefined when it is. IPv4-mapped IPv6 addresses
 * (::ffff:127.0.0.1) are judged as the IPv4 address they carry; every other special IPv6 range (NAT64,
 * 6to4, Teredo, the deprecated IPv4-compatible ::/96…) is refused, since each can lead back to an IPv4
 * address that was not checked.
 */
export function nonPublicReason(address: string): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return nonPublicReason(v6.toIPv4Address().toString());
    // ::/96 other than :: and ::1: the deprecated IPv4-compatible form, which ipaddr.js calls unicast.
    const parts = v6.parts;
    if (parts.slice(0, 6).every((p) => p === 0)) {
      const range = v6.range();
      return rangeNames[range] ?? 'a reserved address';
    }
  }
  const range = ip.range();
  if (range === 'unicast') return undefined;
  return rangeNames[range] ?? `a non-public address (${range})`;
}

/** The IP address a URL's host is, written literally (after WHATWG normalisation), or undefined for a name. */
export function literalAddress(url: URL): string | undefined {
  const host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  // The URL parser already turned 2130706433, 0x7f.1 and 0177.0.0.1 into dotted-quad 127.0.0.1.
  return ipaddr.IPv4.isValidFourPartDecimal(host) ? host : undefined;
}

/** Names that are loopback by definition (RFC 6761), refused without asking DNS. */
const isLocalhostName = (name: string) => {
  const host = name.replace(/\.$/, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost');
};

export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses);
    });
  });

export interface UrlGuard {
  /**
   * Checks a webhook URL as it is stored: undefined when accepted, else the reason, worded to follow
   * "webhook.url ". A name that does not resolve now is accepted: it is checked again at every delivery.
   */
  check(url: string): Promise<string | undefined>;
  /** Throws UrlGuardError when the URL's host is a literal non-public address (sockets skip `lookup` then). */
  checkLiteral(url: URL | string): void;
  /** The resolver the HTTP client connects through; undefined when private targets are allowed. */
  lookup: LookupFunction | undefined;
}

export function createUrlGuard(options: {
  allowPrivate: boolean;
  resolve?: Resolve;
  /** How long a check at creation waits for DNS before accepting the name as not resolvable now. */
  resolveTimeoutMs?: number;
}): UrlGuard {
  const resolve = options.resolve ?? systemResolve;
  const resolveTimeoutMs = options.resolveTimeoutMs ?? 2000;

  /** Resolves a name and checks every answer; throws UrlGuardError when one is not public. */
  async function resolveChecked(hostname: string): Promise<LookupAddress[]> {
    if (isLocalhostName(hostname)) throw new UrlGuardError(`host ${hostname} is a loopback name`);
    const addresses = await resolve(hostname);
    for (const { address } of addresses) {
      const reason = nonPublicReason(address);
      if (reason) throw new UrlGuardError(`host ${hostname} resolves to ${address}, ${reason}`);
    }
    return addresses;
  }

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolveChecked(hostname).then(
      (addresses) => {
        const family =
          lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : lookupOptions.family;
        const wanted = family ? addresses.filter((a) => a.family === family) : addresses;
        if (wanted.length === 0) {
          const error = Object.assign(new Error(`no IPv${family} address for ${hostname}`), {
            code: 'ENOTFOUND',
          });
          callback(error, '', 0);
        } else if (lookupOptions.all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, wanted);
        } else {
          callback(null, wanted[0].address, wanted[0].family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };

  return {
    async check(raw) {
      if (options.allowPrivate) return undefined;
      const url = new URL(raw);
      const literal = literalAddress(url);
      if (literal !== undefined) {
        const reason = nonPublicReason(literal);
        return reason ? `targets ${literal}, ${reason}; only public addresses are allowed` : undefined;
      }
      // Settles to the refusal, or undefined when the name is public or does not resolve now.
      const verdict = resolveChecked(url.hostname).then(
        () => undefined,
        (error) =>
          error instanceof UrlGuardError ? `${error.message}; only public addresses are allowed` : undefined,
      );
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((done) => {
        timer = setTimeout(() => done(undefined), resolveTimeoutMs);
      });
      try {
        return await Promise.race([verdict, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },

    checkLiteral(url) {
      if (options.allowPrivate) return;
      const literal = literalAddress(typeof url === 'string' ? new URL(url) : url);
      if (literal === undefined) return;
      const reason = nonPublicReason(literal);
      if (reason) throw new UrlGuardError(`${literal} is ${reason}`);
    },

    lookup: options.allowPrivate ? undefined : lookup,
  };
}
