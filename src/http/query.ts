// The query string as Fastify's routes read it: node's parser (a key given twice becomes an array), with the
// bracket forms PHP and its HTTP clients write for an array folded in: `links[]=a&links[]=b` and
// `links[0]=a&links[1]=b` (PHP's http_build_query, which Guzzle uses for SMSFactor's PHP SDK) read as
// `links=a&links=b`. Only a trailing `[]` or `[N]` is folded: nested forms (`a[b][c]`) stay as they came.
import { parse } from 'node:querystring';

const arrayKey = /^(.+)\[(\d*)\]$/;

export function parseQuery(query: string): Record<string, unknown> {
  const parsed = parse(query) as Record<string, string | string[]>;
  let folded: Map<string, { index: number; order: number; value: string }[]> | undefined;
  let order = 0;
  for (const key of Object.keys(parsed)) {
    const match = arrayKey.exec(key);
    if (!match) continue;
    folded ??= new Map();
    const [, name, index] = match;
    const entries = folded.get(name) ?? [];
    for (const value of ([] as string[]).concat(parsed[key])) {
      entries.push({ index: index === '' ? Number.POSITIVE_INFINITY : Number(index), order: order++, value });
    }
    folded.set(name, entries);
    delete parsed[key];
  }
  if (!folded) return parsed;
  for (const [name, entries] of folded) {
    // `[N]` in the order of N, `[]` in the order given, after any numbered ones; a plain `name=` stays first.
    entries.sort((a, b) => a.index - b.index || a.order - b.order);
    parsed[name] = ([] as string[]).concat(parsed[name] ?? [], ...entries.map((e) => e.value));
  }
  return parsed;
}
