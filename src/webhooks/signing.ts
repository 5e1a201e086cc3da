// Standard Webhooks signatures (standardwebhooks.com): HMAC-SHA256, keyed with the base64 bytes after the
// secret's `whsec_` prefix, over `<webhook-id>.<webhook-timestamp>.<body>`, sent as `v1,<base64>`.
import { createHmac } from 'node:crypto';

export function standardSignature(
  secret: string,
  msgId: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}
