// The SMPP 3.4 PDUs an ESME exchanges on every message, encoded and read by hand: submit_sm out,
// submit_sm_resp and deliver_sm in, and the header-only PDUs around them. A general codec walks a table of
// fields and filters for each PDU; at thousands of messages a second that cost a quarter of the delivery
// worker. Anything this file does not read (an MO's text and UDH, unusual codings) goes to the `smpp`
// package's parser, which handles every case.

import { CommandId, headerLength, maxShortMessage, type SubmitSmFields, Tag } from '../../sms/smpp-wire.ts';

export {
  CommandId,
  headerLength,
  maxPduLength,
  type PduHeader,
  readHeader,
  type SubmitSmFields,
} from '../../sms/smpp-wire.ts';

/** A PDU with no body: enquire_link, unbind and their answers, generic_nack. */
export function encodeEmpty(commandId: number, sequence: number, status = 0): Buffer {
  const buffer = Buffer.allocUnsafe(headerLength);
  writeHeader(buffer, commandId, status, sequence);
  return buffer;
}

function writeHeader(buffer: Buffer, commandId: number, status: number, sequence: number): void {
  buffer.writeUInt32BE(buffer.length, 0);
  buffer.writeUInt32BE(commandId, 4);
  buffer.writeUInt32BE(status, 8);
  buffer.writeUInt32BE(sequence, 12);
}

/** Writes a C-octet string (latin1, NUL-terminated); returns the offset after it. */
function writeCString(buffer: Buffer, offset: number, value: string): number {
  const end = offset + buffer.write(value, offset, 'latin1');
  buffer[end] = 0;
  return end + 1;
}

/** deliver_sm_resp: its message_id is always empty. */
export function encodeDeliverSmResp(sequence: number, status = 0): Buffer {
  const buffer = Buffer.allocUnsafe(headerLength + 1);
  writeHeader(buffer, CommandId.deliverSmResp, status, sequence);
  buffer[headerLength] = 0;
  return buffer;
}

export interface BindFields {
  systemId: string;
  password: string;
  systemType: string;
}

/** The three binds: transceiver (submits and deliveries on one connection), transmitter or receiver. */
export type BindCommand =
  | typeof CommandId.bindTransceiver
  | typeof CommandId.bindTransmitter
  | typeof CommandId.bindReceiver;

export function encodeBind(commandId: BindCommand, sequence: number, bind: BindFields): Buffer {
  const length =
    headerLength + bind.systemId.length + 1 + bind.password.length + 1 + bind.systemType.length + 1 + 4;
  const buffer = Buffer.allocUnsafe(length);
  writeHeader(buffer, commandId, 0, sequence);
  let at = writeCString(buffer, headerLength, bind.systemId);
  at = writeCString(buffer, at, bind.password);
  at = writeCString(buffer, at, bind.systemType);
  buffer[at++] = 0x34; // interface_version 3.4
  buffer[at++] = 0; // addr_ton
  buffer[at++] = 0; // addr_npi
  buffer[at] = 0; // address_range ''
  return buffer;
}

export function encodeBindTransceiver(sequence: number, bind: BindFields): Buffer {
  return encodeBind(CommandId.bindTransceiver, sequence, bind);
}

export function encodeSubmitSm(sequence: number, sm: SubmitSmFields): Buffer {
  const inPayload = sm.shortMessage.length > maxShortMessage;
  const text = sm.shortMessage.length;
  const length =
    headerLength +
    1 + // service_type ''
    2 +
    sm.source.length +
    1 +
    2 +
    sm.destination.length +
    1 +
    3 + // esm_class, protocol_id, priority_flag
    2 + // schedule_delivery_time '', validity_period ''
    4 + // registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id
    1 + // sm_length
    (inPayload ? 4 + text : text);
  const buffer = Buffer.allocUnsafe(length);
  writeHeader(buffer, CommandId.submitSm, 0, sequence);
  let at = headerLength;
  buffer[at++] = 0;
  buffer[at++] = sm.sourceTon;
  buffer[at++] = sm.sourceNpi;
  at = writeCString(buffer, at, sm.source);
  buffer[at++] = sm.destTon;
  buffer[at++] = sm.destNpi;
  at = writeCString(buffer, at, sm.destination);
  buffer[at++] = sm.esmClass;
  buffer[at++] = 0;
  buffer[at++] = 0;
  buffer[at++] = 0;
  buffer[at++] = 0;
  buffer[at++] = sm.registeredDelivery;
  buffer[at++] = 0;
  buffer[at++] = sm.dataCoding;
  buffer[at++] = 0;
  if (inPayload) {
    buffer[at++] = 0;
    buffer.writeUInt16BE(Tag.messagePayload, at);
    buffer.writeUInt16BE(text, at + 2);
    at += 4;
  } else {
    buffer[at++] = text;
  }
  sm.shortMessage.copy(buffer, at);
  return buffer;
}

/** Reads a C-octet string at the cursor and moves past it; past the end of the PDU it is cut there. */
function readCString(buffer: Buffer, cursor: { at: number }, end: number): string {
  let nul = buffer.indexOf(0, cursor.at);
  if (nul < 0 || nul >= end) nul = end;
  const value = buffer.toString('latin1', cursor.at, nul);
  cursor.at = Math.min(nul + 1, end);
  return value;
}

/** submit_sm_resp's message_id (empty when the SMSC refused the message and sent no body). */
export function readSubmitSmResp(pdu: Buffer): string {
  if (pdu.length <= headerLength) return '';
  return readCString(pdu, { at: headerLength }, pdu.length);
}

export interface DeliverSm {
  sequence: number;
  source: string;
  destination: string;
  esmClass: number;
  dataCoding: number;
  shortMessage: Buffer;
  receiptedMessageId: string | undefined;
  messageState: number | undefined;
  messagePayload: Buffer | undefined;
}

/** The fields of a deliver_sm, its text left as bytes. Returns undefined for a truncated PDU. */
export function readDeliverSm(pdu: Buffer): DeliverSm | undefined {
  const end = pdu.length;
  const cursor = { at: headerLength };
  readCString(pdu, cursor, end); // service_type
  cursor.at += 2; // source_addr_ton, source_addr_npi
  if (cursor.at > end) return undefined;
  const source = readCString(pdu, cursor, end);
  cursor.at += 2; // dest_addr_ton, dest_addr_npi
  if (cursor.at > end) return undefined;
  const destination = readCString(pdu, cursor, end);
  if (cursor.at + 3 > end) return undefined;
  const esmClass = pdu[cursor.at];
  cursor.at += 3; // esm_class, protocol_id, priority_flag
  readCString(pdu, cursor, end); // schedule_delivery_time
  readCString(pdu, cursor, end); // validity_period
  let at = cursor.at;
  // registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id, sm_length
  if (at + 5 > end) return undefined;
  const dataCoding = pdu[at + 2];
  const smLength = pdu[at + 4];
  at += 5;
  if (at + smLength > end) return undefined;
  const shortMessage = pdu.subarray(at, at + smLength);
  at += smLength;
  let receiptedMessageId: string | undefined;
  let messageState: number | undefined;
  let messagePayload: Buffer | undefined;
  while (at + 4 <= end) {
    const tag = pdu.readUInt16BE(at);
    const length = pdu.readUInt16BE(at + 2);
    at += 4;
    if (at + length > end) return undefined;
    if (tag === Tag.receiptedMessageId) receiptedMessageId = readCString(pdu, { at }, at + length);
    else if (tag === Tag.messageState && length >= 1) messageState = pdu[at];
    else if (tag === Tag.messagePayload) messagePayload = pdu.subarray(at, at + length);
    at += length;
  }
  return {
    sequence: pdu.readUInt32BE(12),
    source,
    destination,
    esmClass,
    dataCoding,
    shortMessage,
    receiptedMessageId,
    messageState,
    messagePayload,
  };
}

/**
 * Data codings whose text reads the same in ASCII for the letters, digits, colons and spaces of a receipt:
 * the GSM default alphabet and its national variants unpacked one septet per octet, IA5, Latin-1.
 */
export function isAsciiCompatible(dataCoding: number): boolean {
  return dataCoding <= 0x03;
}
