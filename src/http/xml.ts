// XML in and out, as API.md's wire rules describe: the root element is the resource, repeated elements
// are arrays even when there is one, `gsmsmsid` is an attribute of <gsm> whose text is the number.
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { ApiError, Status } from '../shared/errors.ts';
import { valueObjectPaths } from './value-items.ts';
import { describeXmlError } from './xml-errors.ts';

/** Elements that are arrays wherever they appear under these paths (root included). */
const arrayPaths = new Set([
  'sms.message.links',
  'sms.recipients.gsm',
  'sms.lists',
  'list.contacts.gsm',
  'blacklist.contacts.gsm',
  'npai.contacts.gsm',
  'token.allowed_ips',
  'smpp_user.allowed_ips',
]);

const maxDepth = 32;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: '#text',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Entities are decoded here in one pass: only the five predefined ones and character references exist,
  // since DOCTYPE (and so any entity declaration) is refused.
  processEntities: false,
  tagValueProcessor: (_name, value) => decodeEntities(value),
  attributeValueProcessor: (_name, value) => decodeEntities(value),
  isArray: (_name, jpath) => arrayPaths.has(String(jpath)),
});

const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeEntities(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|amp|lt|gt|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return named[ref];
    const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

const xmlError = (details: string) => new ApiError(Status.xml, details);

function checkDepth(xml: string): void {
  let depth = 0;
  for (const m of xml.matchAll(/<(\/?)[A-Za-z_][^>]*?(\/?)>/g)) {
    if (m[1]) depth--;
    else if (!m[2]) depth++;
    if (depth > maxDepth) throw xmlError(`XML nesting deeper than ${maxDepth} elements is refused`);
  }
}

/**
 * Text of an element that also has attributes arrives as `#text`: on the value-object paths it becomes
 * `value` (the JSON shape); elsewhere the element is just its text. A bare `<gsm>336…</gsm>` becomes `{value}`.
 */
function normalize(node: unknown, path: string): unknown {
  if (Array.isArray(node)) return node.map((item) => normalize(item, path));
  const valueObject = valueObjectPaths.has(path);
  if (node === null || typeof node !== 'object') return valueObject ? { value: String(node ?? '') } : node;
  const obj = node as Record<string, unknown>;
  if ('#text' in obj && !valueObject) return obj['#text'];
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(obj)) {
    if (key === '#text') out.value = child;
    else out[key] = normalize(child, path ? `${path}.${key}` : key);
  }
  return out;
}

const legacyRoot = /^\s*(?:<\?xml[^>]*\?>\s*)?<sms[\s>]/;
const credentialMaxLength = 4096;

/** One element's text in a credentials block, as the parser would give it: entities decoded, CDATA kept. */
function elementText(block: string, name: string): string {
  const found = new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}\\s*>`).exec(block);
  if (!found) return '';
  const text = found[1].trim();
  const cdata = /^<!\[CDATA\[([\s\S]*)\]\]>$/.exec(text);
  return cdata ? cdata[1] : decodeEntities(text);
}

/**
 * A legacy client's `<sms><authentication><username>…</username><password>…</password></authentication>`,
 * found without parsing the body (a scan of its text): undefined when the root is not <sms> or it has no
 * such block. Lets a request without a token be signed in, or refused, before its XML is parsed.
 */
export function xmlBodyCredentials(xml: string): { username: string; password: string } | undefined {
  if (!legacyRoot.test(xml)) return undefined;
  const start = xml.search(/<authentication[\s>]/);
  if (start === -1) return undefined;
  const end = xml.indexOf('</authentication', start);
  if (end === -1 || end - start > credentialMaxLength) return undefined;
  const block = xml.slice(start, end);
  return { username: elementText(block, 'username'), password: elementText(block, 'password') };
}

/** Parses a request body; throws -2 with the reason for anything not well-formed or unsafe. */
export function parseXml(xml: string): Record<string, unknown> {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) {
    throw xmlError('DOCTYPE and entity declarations are not accepted');
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw xmlError(`XML is not well-formed: ${describeXmlError(xml, valid.err)}`);
  }
  checkDepth(xml);
  let parsed: Record<string, unknown>;
  try {
    parsed = normalize(parser.parse(xml), '') as Record<string, unknown>;
  } catch (error) {
    throw xmlError(`XML could not be read: ${(error as Error).message}`);
  }
  const roots = Object.keys(parsed);
  if (roots.length !== 1 || typeof parsed[roots[0]] !== 'object') {
    throw xmlError('XML body must have one root element holding the resource, e.g. <sms>…</sms>');
  }
  return parsed;
}

const builder = new XMLBuilder({ format: false, ignoreAttributes: true, suppressEmptyNode: false });

/** Serializes a response object under the root <response>. */
export function toXml(body: Record<string, unknown>): string {
  return `<?xml version="1.0" encoding="UTF-8"?>${builder.build({ response: body })}`;
}
