import { SegmentedMessage } from 'sms-segments-calculator';
import { describe, expect, it } from 'vitest';
import { countSegments, decodeGsm7, encodeGsm7, encodeUcs2, encodingOf, splitSegments } from './segments.ts';

const gsmBasic =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const gsmExtension = '\f^{}\\[~]|€';

describe('segments: GSM-7', () => {
  it('the basic alphabet has its 127 characters, each one septet', () => {
    expect(gsmBasic.length).toBe(127);
    expect(countSegments(gsmBasic)).toEqual({ encoding: 'gsm7', units: 127, parts: 1 });
  });

  it('each extension character counts two septets', () => {
    for (const char of gsmExtension)
      expect(countSegments(char)).toEqual({ encoding: 'gsm7', units: 2, parts: 1 });
    expect(countSegments('{'.repeat(80))).toEqual({ encoding: 'gsm7', units: 160, parts: 1 });
    expect(countSegments('{'.repeat(81))).toEqual({ encoding: 'gsm7', units: 162, parts: 2 });
  });

  it('160 septets fit one SMS; beyond that, parts hold 153', () => {
    expect(countSegments('a'.repeat(160)).parts).toBe(1);
    expect(countSegments('a'.repeat(161)).parts).toBe(2);
    expect(countSegments('a'.repeat(306)).parts).toBe(2);
    expect(countSegments('a'.repeat(307)).parts).toBe(3);
    expect(countSegments('a'.repeat(459)).parts).toBe(3);
    expect(countSegments('a'.repeat(460)).parts).toBe(4);
  });

  it('never splits an escape pair across parts: the extension character moves to the next part', () => {
    const text = `${'a'.repeat(152)}€${'b'.repeat(10)}`;
    const split = splitSegments(text);
    expect(split.encoding).toBe('gsm7');
    expect(split.texts).toEqual(['a'.repeat(152), `€${'b'.repeat(10)}`]);
    expect(split.texts.join('')).toBe(text);
    // 306 septets would fit 2 × 153 if the pair could straddle the boundary; it cannot, so it takes 3 parts.
    const straddling = `${'a'.repeat(152)}€${'b'.repeat(152)}`;
    expect(countSegments(straddling)).toEqual({ encoding: 'gsm7', units: 306, parts: 3 });
    expect(splitSegments(straddling).texts.map((t) => t.length)).toEqual([152, 152, 1]);
  });

  it('encodes septets with extension characters escaped', () => {
    expect([...encodeGsm7('@A€\n')]).toEqual([0x00, 0x41, 0x1b, 0x65, 0x0a]);
    expect(() => encodeGsm7('ç')).toThrow(RangeError);
  });
});

describe('segments: UCS-2', () => {
  it('any character outside GSM-7 makes the whole text UCS-2', () => {
    expect(encodingOf('Hello ç')).toBe('ucs2');
    expect(encodingOf('Hello `')).toBe('ucs2');
    expect(encodingOf('Hello Ç é €')).toBe('gsm7');
    expect(countSegments('ç'.repeat(70))).toEqual({ encoding: 'ucs2', units: 70, parts: 1 });
    expect(countSegments('ç'.repeat(71))).toEqual({ encoding: 'ucs2', units: 71, parts: 2 });
    expect(countSegments('ç'.repeat(134)).parts).toBe(2);
    expect(countSegments('ç'.repeat(135)).parts).toBe(3);
  });

  it('unicode forces UCS-2 even for a GSM-7 text', () => {
    expect(countSegments('a'.repeat(71), true)).toEqual({ encoding: 'ucs2', units: 71, parts: 2 });
    expect(countSegments('a'.repeat(71), false).parts).toBe(1);
  });

  it('counts UTF-16 code units: an emoji outside the BMP is two', () => {
    expect(countSegments('😀').units).toBe(2);
    expect(countSegments('😀'.repeat(35)).parts).toBe(1);
    expect(countSegments('😀'.repeat(36)).parts).toBe(2);
  });

  it('never splits a surrogate pair across parts', () => {
    const text = `${'a'.repeat(66)}😀${'b'.repeat(10)}`;
    const split = splitSegments(text);
    expect(split.texts).toEqual(['a'.repeat(66), `😀${'b'.repeat(10)}`]);
    for (const part of split.texts) expect(part.length).toBeLessThanOrEqual(67);
  });

  it('encodes UTF-16 big-endian', () => {
    expect([...encodeUcs2('aé😀')]).toEqual([0x00, 0x61, 0x00, 0xe9, 0xd8, 0x3d, 0xde, 0x00]);
  });
});

describe('segments: GSM-7 decoding (data_coding 0, one septet per octet)', () => {
  it('reads back every basic and extension character it encodes', () => {
    const text = `${gsmBasic}${gsmExtension}`;
    expect(decodeGsm7(encodeGsm7(text))).toBe(text);
  });

  it('reads an escape before a septet with no extension as the basic character, and drops a trailing escape', () => {
    expect(decodeGsm7(Uint8Array.from([0x1b, 0x41, 0x42, 0x1b]))).toBe('AB');
  });
});

describe('segments agree with sms-segments-calculator (test oracle)', () => {
  // A deterministic generator, so a failure reproduces.
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = (alphabet: string) => alphabet[Math.floor(random() * alphabet.length)];

  it('on 2,000 random texts of GSM-7 with extension characters, and of UCS-2', () => {
    const ucs = 'çłżœ中文字ΩЖж';
    for (let i = 0; i < 2000; i++) {
      const length = 1 + Math.floor(random() * 500);
      let text = '';
      const mode = i % 3;
      for (let j = 0; j < length; j++) {
        const r = random();
        if (mode === 0) text += r < 0.1 ? pick(gsmExtension) : pick(gsmBasic);
        else if (mode === 1) text += r < 0.05 ? pick(ucs) : pick(gsmBasic);
        else text += r < 0.1 ? pick(gsmExtension) : r < 0.12 ? pick(ucs) : pick(gsmBasic);
      }
      // The oracle treats CR LF as one grapheme; keep CR out so both count characters alike.
      text = text.replace(/\r/g, '');
      const oracle = new SegmentedMessage(text);
      const ours = countSegments(text);
      expect({ text, encoding: ours.encoding, parts: ours.parts }).toEqual({
        text,
        encoding: oracle.encodingName === 'GSM-7' ? 'gsm7' : 'ucs2',
        parts: oracle.segmentsCount,
      });
      const split = splitSegments(text);
      expect(split.texts.join('')).toBe(text);
      expect(split.texts.length).toBe(ours.parts);
    }
  });
});
