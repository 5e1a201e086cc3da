// The one cookie the API reads (the console's session), parsed and written by hand: RFC 6265's simple
// `name=value` pairs, nothing to decode in the values Pigeon sets (base64url).

/** The value of cookie `name` in a Cookie header, if it is there. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

export interface CookieOptions {
  /** Seconds; 0 removes the cookie. */
  maxAgeSeconds: number;
  /** Only over HTTPS: set when the request came over TLS (directly or through a trusted proxy). */
  secure: boolean;
  path: string;
}

/** A Set-Cookie value the page's scripts cannot read, sent only by pages of this site. */
export function sessionCookie(name: string, value: string, options: CookieOptions): string {
  return [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
