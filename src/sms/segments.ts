// SMS text encoding and splitting (3GPP TS 23.038 / 23.040), pure and allocation-light because pricing
// runs it on every message of a campaign. GSM-7 packs 160 septets in one SMS and 153 per part of a
// concatenated one (the 6-byte UDH takes 7 septets); UCS-2 holds 70 UTF-16 code units, 67 per part.

export type Encoding = 'gsm7' | 'ucs2';

/** The GSM 03.38 default alphabet, indexed by septet value (0x1B, the escape, is not a character). */
const basicAlphabet =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** The extension table: each character is sent as the escape 0x1B followed by this septet. */
const extensionSeptets: Record<string, number> = {
  '\f': 0x0a,
  '^': 0x14,
  '{': 0x28,
  '}': 0x29,
  '\\': 0x2f,
  '[': 0x3c,
  '~': 0x3d,
  ']': 0x3e,
  '|': 0x40,
  '€': 0x65,
};

export const gsmSingleLimit = 160;
export const gsmPartLimit = 153;
export const ucs2SingleLimit = 70;
export const ucs2PartLimit = 67;
/** The most parts one message can have: the concatenation header counts them in one byte. */
export const maxConcatenatedParts = 255;
const escapeSeptet = 0x1b;

/**
 * Septets per UTF-16 code unit for every code unit below U+2100 (where all GSM characters live):
 * 1 basic, 2 extension, 0 not in GSM-7. A typed array keeps the hot loop free of hashing.
 */
const tableSize = 0x2100;
const septetCost = new Uint8Array(tableSize);
const septetValue = new Uint8Array(tableSize);
for (let i = 0; i < basicAlphabet.length; i++) {
  if (i === escapeSeptet) continue;
  const code = basicAlphabet.charCodeAt(i);
  septetCost[code] = 1;
  septetValue[code] = i;
}
for (const [char, value] of Object.entries(extensionSeptets)) {
  const code = char.charCodeAt(0);
  septetCost[code] = 2;
  septetValue[code] = value;
}

/** Septets of one code unit in GSM-7: 1 or 2, or 0 when the unit has no GSM-7 form. */
const gsmCost = (code: number): number => (code < tableSize ? septetCost[code] : 0);

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** The encoding a text needs: UCS-2 when any character is outside GSM-7, or when the caller asks for it. */
export function encodingOf(text: string, unicode = false): Encoding {
  if (unicode) return 'ucs2';
  for (let i = 0; i < text.length; i++) if (gsmCost(text.charCodeAt(i)) === 0) return 'ucs2';
  return 'gsm7';
}

export interface SegmentCount {
  encoding: Encoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) of the whole text. */
  units: number;
  /** SMS parts the text is sent in: the price in credits of one message. */
  parts: number;
}

/**
 * Walks the text greedily into parts of at most `limit` units, never cutting an escape pair or a surrogate
 * pair, and reports each part's end index to `onPart`. Returns the number of parts.
 */
function walkParts(text: string, encoding: Encoding, onPart?: (end: number) => void): number {
  const limit = encoding === 'gsm7' ? gsmPartLimit : ucs2PartLimit;
  let parts = 0;
  let used = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    let width: number;
    let span = 1;
    if (encoding === 'gsm7') width = gsmCost(code);
    else if (isHighSurrogate(code) && i + 1 < text.length) {
      width = 2;
      span = 2;
    } else width = 1;
    if (used + width > limit) {
      parts++;
      onPart?.(i);
      used = 0;
    }
    used += width;
    i += span;
  }
  if (used > 0 || parts === 0) {
    parts++;
    onPart?.(text.length);
  }
  return parts;
}

/** Counts the units and parts of a text; the text must already be final (links and mention in place). */
export function countSegments(text: string, unicode = false): SegmentCount {
  let encoding: Encoding = unicode ? 'ucs2' : 'gsm7';
  let units = 0;
  if (!unicode) {
    for (let i = 0; i < text.length; i++) {
      const cost = gsmCost(text.charCodeAt(i));
      if (cost === 0) {
        encoding = 'ucs2';
        break;
      }
      units += cost;
    }
  }
  if (encoding === 'ucs2') {
    units = text.length;
    if (units <= ucs2SingleLimit) return { encoding, units, parts: 1 };
  } else if (units <= gsmSingleLimit) return { encoding, units, parts: 1 };
  return { encoding, units, parts: walkParts(text, encoding) };
}

export interface SplitText extends SegmentCount {
  /** The text of each part, in order; one element when the text fits in a single SMS. */
  texts: string[];
}

/** Splits a text into the parts it is sent as (the delivery worker builds one UDH-prefixed PDU per part). */
export function splitSegments(text: string, unicode = false): SplitText {
  const counted = countSegments(text, unicode);
  if (counted.parts === 1) return { ...counted, texts: [text] };
  const texts: string[] = [];
  let start = 0;
  walkParts(text, counted.encoding, (end) => {
    texts.push(text.slice(start, end));
    start = end;
  });
  return { ...counted, texts };
}

/** GSM-7 septet values of a text, unpacked (one per byte), extension characters as 0x1B + value. */
export function encodeGsm7(text: string): Uint8Array {
  let size = 0;
  for (let i = 0; i < text.length; i++) {
    const cost = gsmCost(text.charCodeAt(i));
    if (cost === 0) throw new RangeError(`character U+${text.charCodeAt(i).toString(16)} has no GSM-7 form`);
    size += cost;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (septetCost[code] === 2) out[at++] = escapeSeptet;
    out[at++] = septetValue[code];
  }
  return out;
}

/** UCS-2 bytes of a text: UTF-16 big-endian, surrogate pairs kept as two code units. */
export function encodeUcs2(text: string): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[2 * i] = code >> 8;
    out[2 * i + 1] = code & 0xff;
  }
  return out;
}

/** Characters by extension septet (after the escape 0x1B). */
const extensionChars = new Map(Object.entries(extensionSeptets).map(([char, value]) => [value, char]));

/**
 * Text of GSM-7 septets, unpacked (one per byte, as SMPP's data_coding 0 carries them): 0x1B followed by a
 * septet is that septet's extension character; an escape before a septet with none reads as its basic
 * character (23.038's fallback), and a septet value above 0x7F as its low seven bits.
 */
export function decodeGsm7(septets: Uint8Array): string {
  let text = '';
  for (let i = 0; i < septets.length; i++) {
    const value = septets[i] & 0x7f;
    if (value === escapeSeptet) {
      if (i + 1 >= septets.length) break;
      const next = septets[++i] & 0x7f;
      text += extensionChars.get(next) ?? basicAlphabet[next];
      continue;
    }
    text += basicAlphabet[value];
  }
  return text;
}
