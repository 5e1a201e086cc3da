// Standard Webhooks signatures (standardwebhooks.com): HMAC-SHA256, keyed with the base64 bytes after the
// secret's `whsec_` prefix, over `<webhook-id>.<webhook-timestamp>.<body>`, sent as `v1,<base64>`.
import { createHmac } from 'node:crypto';

// Decoded keys by secret: every delivery of a webhook signs with the same one.
const keys = new Map<string, Buffer>();

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 10_000) keys.clear();
    key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
    keys.set(secret, key);
  }
  return key;
}

export function standardSignature(
  secret: string,
  msgId: string,
  timestampSeconds: number,
  body: string,
): string {
  const mac = createHmac('sha256', keyOf(secret))
    .update(`${msgId}.${timestampSeconds}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}
