// What makes two requests "the same request" for an Idempotency-Key: the route and the request's canonical
// form, hashed. The canonical form is JSON with every object's keys sorted and undefined values dropped, so a
// retry that serializes its body with its keys in another order is still recognized as the same request.
import { createHash } from 'node:crypto';

/** Writes the canonical JSON of `value` in pieces: a send of 500,000 recipients is never one string. */
function writeCanonical(value: unknown, write: (piece: string) => void): void {
  if (value === null || typeof value !== 'object') {
    // Numbers, strings, booleans as JSON writes them; undefined (an absent optional field) as null in arrays.
    write(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    write('[');
    value.forEach((item, i) => {
      if (i > 0) write(',');
      writeCanonical(item, write);
    });
    write(']');
    return;
  }
  write('{');
  let first = true;
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined) continue;
    write(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
    first = false;
    writeCanonical(member, write);
  }
  write('}');
}

/** JSON of `value` with object keys sorted at every level and undefined members left out. */
export function canonicalJson(value: unknown): string {
  const pieces: string[] = [];
  writeCanonical(value, (piece) => pieces.push(piece));
  return pieces.join('');
}

/** Characters gathered before they are handed to the hash: few calls into it, bounded memory. */
const chunkChars = 64 * 1024;

/** SHA-256 (hex) of the route and the canonical form of what the request asks. */
export function requestHash(route: string, payload: unknown): string {
  const hash = createHash('sha256').update(route).update('\n');
  let chunk = '';
  writeCanonical(payload, (piece) => {
    chunk += piece;
    if (chunk.length >= chunkChars) {
      hash.update(chunk);
      chunk = '';
    }
  });
  return hash.update(chunk).digest('hex');
}
