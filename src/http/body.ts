// Request bodies: JSON, XML, or a form whose `data` field holds JSON (legacy clients). The declared
// Content-Type decides, unless the first character contradicts it (`<` is XML, `{` or `[` JSON); when the type
// is missing or says something else, the first character does.
import { ApiError, Status } from '../shared/errors.ts';
import { checkXmlSize } from './request-limits.ts';
import { bareValuesToObjects } from './value-items.ts';
import { parseXml } from './xml.ts';

export type BodyFormat = 'json' | 'xml';
type Syntax = BodyFormat | 'form' | 'empty';

/** The JSON escape of a NUL character (U+0000), not itself escaped (`\\u0000` is a backslash and "u0000"). */
const nulEscape = /(?<!\\)(?:\\\\)*\\u0000/;

function parseJson(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ApiError(Status.json, `body is not valid JSON: ${(error as Error).message}`);
  }
  // Refused on both databases alike: PostgreSQL cannot store it in a text, and no SMS or name needs it.
  if (text.includes('\\u0000') && nulEscape.test(text)) {
    throw ApiError.data('the body holds a NUL character (\\u0000), which no field accepts');
  }
  return parsed;
}

export function detectSyntax(text: string, contentType: string | undefined): Syntax {
  const trimmed = text.trim();
  if (trimmed === '') return 'empty';
  // What the first character says, when it says something no other declared syntax could start with: `curl -d`
  // declares a form whatever it sends, so `<sms>…` or `{"sms":…}` under a form (or the other) type is sniffed.
  const sniffed = trimmed[0] === '<' ? 'xml' : trimmed[0] === '{' || trimmed[0] === '[' ? 'json' : undefined;
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('x-www-form-urlencoded')) return sniffed ?? 'form';
  if (type.includes('xml')) return sniffed ?? 'xml';
  if (type.includes('json')) return sniffed ?? 'json';
  if (sniffed) return sniffed;
  if (/^[\w.%-]+=/.test(trimmed)) return 'form';
  return 'json';
}

/** The format a reply should default to for this body (a form's `data` is JSON). */
export const replyFormatOf = (syntax: Syntax): BodyFormat | undefined =>
  syntax === 'xml' ? 'xml' : syntax === 'json' ? 'json' : undefined;

/** The XML text a body of this syntax would be parsed as (itself, or a form's `data`), if any. */
export function xmlToParse(text: string, syntax: Syntax): string | undefined {
  if (syntax === 'xml') return text.trim();
  if (syntax !== 'form') return undefined;
  const data = new URLSearchParams(text.trim()).get('data');
  return data !== null && detectSyntax(data, undefined) === 'xml' ? data.trim() : undefined;
}

/**
 * Parses a body of the given syntax. An XML body (sniffed, or in a form's `data`) longer than `xmlLimit`
 * characters is refused before it is parsed, as a declared one is before it is read: XML parsing takes many
 * times the body's size in memory.
 */
export function parseBody(text: string, syntax: Syntax, xmlLimit = Number.POSITIVE_INFINITY): unknown {
  switch (syntax) {
    case 'empty':
      return undefined;
    case 'xml':
      checkXmlSize(text, xmlLimit);
      return parseXml(text.trim());
    case 'json':
      return bareValuesToObjects(parseJson(text));
    case 'form': {
      const form = new URLSearchParams(text.trim());
      const data = form.get('data');
      if (data === null) return Object.fromEntries(form);
      return parseBody(data, detectSyntax(data, undefined), xmlLimit);
    }
  }
}
