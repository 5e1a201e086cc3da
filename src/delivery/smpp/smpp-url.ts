// The SMSC an smpp:// or ssmpp:// URL names.

/**
 * The host, port, credentials and whether TLS is used, from an smpp:// or ssmpp:// URL; throws naming what is
 * wrong. The default port is 2775, 3550 for ssmpp:// (the `smpp` package's).
 */
export function parseSmppUrl(url: string) {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('the SMPP URL is not a URL (smpp://system_id:password@host:port)');
  }
  if (parsed.protocol !== 'smpp:' && parsed.protocol !== 'ssmpp:')
    throw new Error(`the SMPP URL must start with smpp:// or ssmpp://, got ${parsed.protocol}//`);
  if (!parsed.hostname) throw new Error('the SMPP URL names no host');
  const tls = parsed.protocol === 'ssmpp:';
  return {
    tls,
    // An IPv6 literal comes bracketed from URL; sockets want it bare.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(parsed.port || (tls ? 3550 : 2775)),
    systemId: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

export type SmppTarget = ReturnType<typeof parseSmppUrl>;
