// A submit_sm's text: its coding read (data_coding 0 GSM 03.38 one septet per octet, 1 IA5, 3 Latin-1,
// 8 UCS-2), and the part of a long message it carries: a UDH (esm_class 0x40) with an 8- or 16-bit reference,
// SAR TLVs, or the whole text in message_payload. Parts are joined as bytes and decoded once complete, so a
// UCS-2 surrogate pair or a GSM escape split across two parts reads whole.
import { decodeGsm7 } from '../sms/segments.ts';
import { Tag } from '../sms/smpp-wire.ts';
import type { SubmitSm } from './pdu.ts';

/** The codings the server takes. */
export const supportedCodings = new Set([0, 1, 3, 8]);

export function decodeText(dataCoding: number, bytes: Buffer): string {
  if (dataCoding === 8) {
    const even = bytes.length - (bytes.length % 2);
    const swapped = Buffer.from(bytes.subarray(0, even));
    swapped.swap16();
    return swapped.toString('utf16le');
  }
  if (dataCoding === 0) return decodeGsm7(bytes);
  return bytes.toString('latin1');
}

/** One part of a concatenated message: which message (its reference), how many parts, and which this is. */
export interface PartOf {
  ref: number;
  total: number;
  seq: number;
}

export interface SubmitBody {
  /** The text's bytes in this PDU, its UDH removed. */
  bytes: Buffer;
  /** Set when this PDU is one part of a longer message. */
  part?: PartOf;
}

/** The text bytes of a submit_sm and the part it carries, or a reason to refuse it. */
export function submitBody(
  sm: Pick<SubmitSm, 'esmClass' | 'shortMessage' | 'tlvs'>,
): SubmitBody | { error: string } {
  const payload = sm.tlvs.get(Tag.messagePayload);
  if (payload !== undefined && sm.shortMessage.length > 0) {
    return { error: 'short_message and message_payload both given' };
  }
  let bytes = payload ?? sm.shortMessage;
  let part: PartOf | undefined;
  if (sm.esmClass & 0x40) {
    if (bytes.length < 1 || bytes[0] + 1 > bytes.length) return { error: 'UDH longer than the message' };
    const udhEnd = bytes[0] + 1;
    for (let at = 1; at + 2 <= udhEnd; ) {
      const iei = bytes[at];
      const length = bytes[at + 1];
      const data = bytes.subarray(at + 2, at + 2 + length);
      if (iei === 0x00 && length === 3) part = { ref: data[0], total: data[1], seq: data[2] };
      else if (iei === 0x08 && length === 4)
        part = { ref: data.readUInt16BE(0), total: data[2], seq: data[3] };
      at += 2 + length;
    }
    bytes = bytes.subarray(udhEnd);
  } else {
    const ref = sm.tlvs.get(Tag.sarMsgRefNum);
    const total = sm.tlvs.get(Tag.sarTotalSegments);
    const seq = sm.tlvs.get(Tag.sarSegmentSeqnum);
    if (ref?.length === 2 && total?.length === 1 && seq?.length === 1) {
      part = { ref: ref.readUInt16BE(0), total: total[0], seq: seq[0] };
    }
  }
  if (part && (part.total === 0 || part.seq === 0 || part.seq > part.total)) {
    return { error: `part ${part.seq} of ${part.total}` };
  }
  if (part && part.total === 1) part = undefined;
  return { bytes, part };
}

interface Pending {
  parts: (Buffer | undefined)[];
  /** The ids answered to the parts so far. */
  ids: string[];
  /** Those of them whose submit asked for a receipt. */
  receiptIds: string[];
  received: number;
  dataCoding: number;
  startedAt: number;
}

/**
 * The parts of long messages until their last one, per SMPP user, source, destination and reference, in this
 * process's memory: a message whose parts stop coming is dropped after `ttlMs` (its parts were answered, no
 * credit was taken). At most `maxPending` messages wait per user; beyond, the oldest is dropped.
 */
export function createConcatenation(options: { ttlMs: number; maxPending: number; now: () => number }) {
  const pending = new Map<string, Pending>();
  const perUser = new Map<number, number>();

  function drop(key: string): void {
    pending.delete(key);
    const user = Number(key.slice(0, key.indexOf('|')));
    const left = (perUser.get(user) ?? 1) - 1;
    if (left <= 0) perUser.delete(user);
    else perUser.set(user, left);
  }

  function expire(now: number): void {
    for (const [key, p] of pending) {
      if (now - p.startedAt < options.ttlMs) break;
      drop(key);
    }
  }

  return {
    /**
     * Adds a part, answered with `id` (`receipt`: it asked for a receipt): the whole message's bytes, the ids of
     * its other parts, and those of them that asked for a receipt, once every part came; else undefined. Parts
     * of one message in different codings are refused with an error.
     */
    add(
      userId: number,
      source: string,
      destination: string,
      dataCoding: number,
      part: PartOf,
      bytes: Buffer,
      id: string,
      receipt: boolean,
    ): { bytes: Buffer; otherIds: string[]; receiptIds: string[] } | undefined | { error: string } {
      const now = options.now();
      expire(now);
      const key = `${userId}|${source}|${destination}|${part.ref}|${part.total}`;
      let p = pending.get(key);
      if (!p) {
        const count = perUser.get(userId) ?? 0;
        if (count >= options.maxPending) {
          for (const k of pending.keys()) {
            if (k.startsWith(`${userId}|`)) {
              drop(k);
              break;
            }
          }
        }
        p = {
          parts: new Array(part.total),
          ids: [],
          receiptIds: [],
          received: 0,
          dataCoding,
          startedAt: now,
        };
        pending.set(key, p);
        perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
      }
      if (p.dataCoding !== dataCoding) return { error: 'parts of one message in different data codings' };
      if (p.parts[part.seq - 1] === undefined) {
        p.parts[part.seq - 1] = Buffer.from(bytes);
        p.received++;
      }
      if (p.received < part.total) {
        p.ids.push(id);
        if (receipt) p.receiptIds.push(id);
        return undefined;
      }
      drop(key);
      return { bytes: Buffer.concat(p.parts as Buffer[]), otherIds: p.ids, receiptIds: p.receiptIds };
    },
    /** Messages waiting for parts (for tests and metrics). */
    size: () => pending.size,
  };
}
