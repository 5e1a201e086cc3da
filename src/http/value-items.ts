// Arrays whose items are objects with a `value` (a number, or a list id): `recipients.gsm`, `contacts.gsm`,
// `lists`. XML gives them from a bare `<gsm>336…</gsm>`; a JSON client may likewise write the bare number.

/** The paths (root included) of the value-object arrays, in XML and in JSON alike. */
export const valueObjectPaths: ReadonlySet<string> = new Set([
  'sms.recipients.gsm',
  'sms.lists',
  'list.contacts.gsm',
  'blacklist.contacts.gsm',
  'npai.contacts.gsm',
]);

/** The same paths split once: every JSON request body is walked along them. */
const valueObjectKeys = [...valueObjectPaths].map((path) => {
  const keys = path.split('.');
  return { parents: keys.slice(0, -1), last: keys[keys.length - 1] };
});

const objectAt = (node: unknown, key: string): Record<string, unknown> | undefined => {
  const child = (node as Record<string, unknown>)[key];
  return child !== null && typeof child === 'object' && !Array.isArray(child)
    ? (child as Record<string, unknown>)
    : undefined;
};

/**
 * In a parsed JSON body, turns each bare string or number of a value-object array into `{value}`:
 * `{"gsm":["33612345678"]}` reads as `{"gsm":[{"value":"33612345678"}]}`. Anything else is left to the
 * route's schema, which names what is wrong.
 */
export function bareValuesToObjects(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  for (const { parents, last } of valueObjectKeys) {
    let node: Record<string, unknown> | undefined = body as Record<string, unknown>;
    for (const key of parents) node = node && objectAt(node, key);
    const items = node?.[last];
    if (!Array.isArray(items)) continue;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (typeof item === 'string' || typeof item === 'number') items[i] = { value: String(item) };
    }
  }
  return body;
}
