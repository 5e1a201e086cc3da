/**
 * What a JSON answer looks like once written as XML and read back: every leaf a string, null empty,
 * and an empty array absent (arrays are repeated elements, so none repeated is no element).
 */
export function asXmlWouldSay(value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(asXmlWouldSay);
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => !(Array.isArray(v) && v.length === 0))
        .map(([k, v]) => [k, asXmlWouldSay(v)]),
    );
  }
  return String(value);
}
