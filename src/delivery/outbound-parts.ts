// Turns a stored message into the SMS parts that go on the wire: GSM-7 or UCS-2 payloads, with an 8-bit
// concatenation UDH (IEI 0x00) on each part of a long message.
import { type Encoding, encodeGsm7, encodeUcs2, splitSegments } from '../sms/segments.ts';
import type { OutboundPart } from './transport.ts';

export function buildParts(message: {
  recipient: string;
  sender: string | null;
  text: string;
  encoding: string;
  /** Concatenation reference, 0–255; the same for every part of one message. */
  ref: number;
}): OutboundPart[] {
  const encoding = message.encoding as Encoding;
  const split = splitSegments(message.text, encoding === 'ucs2');
  const dataCoding = split.encoding === 'ucs2' ? 8 : 0;
  const encode = split.encoding === 'ucs2' ? encodeUcs2 : encodeGsm7;
  const total = split.texts.length;
  return split.texts.map((text, i) => ({
    destination: message.recipient,
    sender: message.sender,
    dataCoding,
    udh: total > 1 ? Uint8Array.of(0x05, 0x00, 0x03, message.ref & 0xff, total, i + 1) : undefined,
    payload: encode(text),
  }));
}

/** TON/NPI of a sender: alphanumeric (5/0) when it has a letter, international (1/1) when it is digits. */
export function senderAddress(sender: string | null): { ton: number; npi: number; addr: string } {
  if (!sender) return { ton: 0, npi: 0, addr: '' };
  if (/^\d+$/.test(sender)) return { ton: 1, npi: 1, addr: sender };
  return { ton: 5, npi: 0, addr: sender };
}
