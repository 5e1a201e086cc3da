// Receipts and inbound messages: one deliver_sm read, recorded through the connector's handler, then answered.
// A receipt in an ASCII-compatible coding is read by `pdu-codec.ts`; anything else by the `smpp` package's
// parser.
import smpp, { type Pdu } from 'smpp';
import type { Log } from '../../shared/log.ts';
import { parseReceipt } from '../receipt.ts';
import type { InboundHandler, InboundMessage } from '../transport.ts';
import { isAsciiCompatible, readDeliverSm } from './pdu-codec.ts';
import type { SmppSession } from './session.ts';

const receiptEsmMask = 0x3c;
const deliveryReceipt = 0x04;

/** What a bind lends the reading of its deliver_sm: the connector's handler, its log and fields, its cork. */
export interface DeliverSmReader {
  readonly handler: InboundHandler;
  readonly log: Log;
  /** Fields of every log line of this bind. */
  readonly where: object;
  /** Holds the socket's writes until the end of this event-loop turn. */
  cork(session: SmppSession): void;
}

/** The message text of a deliver_sm, from short_message or message_payload, after the package decoded it. */
function messageOf(pdu: Pdu): { text: string; udh: Buffer[] } {
  const raw = (pdu.message_payload ?? pdu.short_message) as
    | { message?: unknown; udh?: Buffer[] }
    | Buffer
    | string;
  if (typeof raw === 'string') return { text: raw, udh: [] };
  if (Buffer.isBuffer(raw)) return { text: raw.toString('latin1'), udh: [] };
  const message = raw?.message;
  const text =
    typeof message === 'string' ? message : Buffer.isBuffer(message) ? message.toString('latin1') : '';
  return { text, udh: raw?.udh ?? [] };
}

/** Concatenation info from a UDH (8- or 16-bit reference) or the SAR TLVs. */
function concatOf(pdu: Pdu, udh: Buffer[]): InboundMessage['part'] {
  for (const ie of udh) {
    if (ie[0] === 0x00 && ie.length >= 5) return { ref: ie[2], total: ie[3], seq: ie[4] };
    if (ie[0] === 0x08 && ie.length >= 6) return { ref: ie.readUInt16BE(2), total: ie[4], seq: ie[5] };
  }
  if (typeof pdu.sar_msg_ref_num === 'number' && typeof pdu.sar_total_segments === 'number') {
    return { ref: pdu.sar_msg_ref_num, total: pdu.sar_total_segments, seq: Number(pdu.sar_segment_seqnum) };
  }
  return undefined;
}

/**
 * Records one deliver_sm (a receipt or an inbound message) and answers it; one that cannot be recorded is
 * answered ESME_RX_T_APPN.
 */
export async function answerDeliverSm(
  bind: DeliverSmReader,
  session: SmppSession,
  raw: Buffer,
): Promise<void> {
  const sequence = raw.readUInt32BE(12);
  const { handler } = bind;
  try {
    const fields = readDeliverSm(raw);
    const isReceipt =
      fields !== undefined &&
      ((fields.esmClass & receiptEsmMask) === deliveryReceipt || fields.receiptedMessageId !== undefined);
    if (isReceipt && isAsciiCompatible(fields.dataCoding)) {
      // A receipt's id, stat and err read the same whatever the GSM table: no need for the full parser.
      const text = (fields.messagePayload ?? fields.shortMessage).toString('latin1');
      await onReceipt(bind, text, fields.receiptedMessageId, fields.messageState);
    } else {
      const pdu = new smpp.PDU(raw);
      const { text, udh } = messageOf(pdu);
      if (isReceipt) await onReceipt(bind, text, pdu.receipted_message_id, pdu.message_state);
      else
        await handler.onInbound({
          from: String(pdu.source_addr ?? ''),
          to: String(pdu.destination_addr ?? ''),
          text,
          part: concatOf(pdu, udh),
        });
    }
    bind.cork(session);
    session.answerDeliver(sequence);
  } catch (error) {
    // Not acknowledged as done: the SMSC keeps the message and offers it again.
    bind.log.error(
      { ...bind.where, err: (error as Error).message },
      'deliver_sm not recorded; asking SMSC to retry',
    );
    session.answerDeliver(sequence, smpp.ESME_RX_T_APPN);
  }
}

async function onReceipt(
  bind: DeliverSmReader,
  text: string,
  receiptedMessageId: unknown,
  messageState: unknown,
): Promise<void> {
  const receipt = parseReceipt(text, { receiptedMessageId, messageState });
  if (receipt) await bind.handler.onReceipt(receipt);
  else bind.log.warn({ ...bind.where, text }, 'unreadable delivery receipt acknowledged and ignored');
}
