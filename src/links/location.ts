// A long URL as a `Location` header value. Node refuses header values with control characters or
// characters above U+00FF, and anything outside printable ASCII is ambiguous on the wire, so such URLs
// are percent-encoded once, when a link is first resolved, instead of failing at redirect time.

const headerSafe = /^[\x21-\x7e]+$/;

export function locationOf(longUrl: string): string {
  if (headerSafe.test(longUrl)) return longUrl;
  try {
    // The WHATWG serialization punycodes the host and percent-encodes the path, query and fragment.
    const href = new URL(longUrl).href;
    if (headerSafe.test(href)) return href;
  } catch {
    // Not a URL the parser accepts: fall through to encoding byte by byte.
  }
  return longUrl.replace(/[^\x21-\x7e]/gu, (char) => {
    let encoded = '';
    for (const byte of Buffer.from(char, 'utf8'))
      encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    return encoded;
  });
}
