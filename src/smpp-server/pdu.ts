// The SMPP 3.4 PDUs the server reads and writes, by hand: binds, submit_sm, data_sm and submit_multi (fields
// and the TLVs of long messages), query_sm, cancel_sm, enquire_link and unbind in; their answers, deliver_sm
// (receipts and replies) and generic_nack out.

import {
  CommandId as Command,
  headerLength,
  maxShortMessage,
  type SubmitSmFields,
  Tag,
} from '../sms/smpp-wire.ts';

export { Command };

/**
 * The command_status of each refusal (docs/smpp-server.md has the table). The 0x400 range is SMPP's
 * vendor-specific one: Pigeon's filters have no standard code.
 */
export const CommandStatus = {
  ESME_ROK: 0x00,
  ESME_RINVMSGLEN: 0x01,
  ESME_RINVCMDLEN: 0x02,
  ESME_RINVCMDID: 0x03,
  ESME_RINVBNDSTS: 0x04,
  ESME_RALYBND: 0x05,
  ESME_RCANCELFAIL: 0x11,
  ESME_RSYSERR: 0x08,
  ESME_RINVSRCADR: 0x0a,
  ESME_RINVDSTADR: 0x0b,
  ESME_RBINDFAIL: 0x0d,
  ESME_RINVPASWD: 0x0e,
  ESME_RINVSYSID: 0x0f,
  ESME_RMSGQFUL: 0x14,
  ESME_RINVNUMDESTS: 0x33,
  ESME_RINVDLNAME: 0x34,
  ESME_RINVESMCLASS: 0x43,
  ESME_RSUBMITFAIL: 0x45,
  ESME_RTHROTTLED: 0x58,
  ESME_RINVSCHED: 0x61,
  ESME_RQUERYFAIL: 0x67,
  ESME_RINVOPTPARSTREAM: 0xc0,
  /** The recipient is on the account's blacklist. */
  blacklisted: 0x400,
  /** The recipient is on the account's NPAI list (number does not exist). */
  npai: 0x401,
  /** The recipient's country is not allowed, or no route takes it. */
  notAllowed: 0x402,
  /** The account has not the credits the message's parts cost. */
  outOfCredits: 0x403,
  /** A data_coding other than 0, 1, 3 and 8. */
  unsupportedCoding: 0x404,
} as const;

/** The body of a PDU did not hold what its command needs. */
export class MalformedPdu extends Error {}

/** The fields `read` finds in `pdu`, or undefined when its body is malformed (any other error is thrown). */
export function fieldsOf<T>(read: (pdu: Buffer) => T, pdu: Buffer): T | undefined {
  try {
    return read(pdu);
  } catch (error) {
    if (error instanceof MalformedPdu) return undefined;
    throw error;
  }
}

class Reader {
  at = headerLength;
  constructor(private readonly pdu: Buffer) {}
  get end(): number {
    return this.pdu.length;
  }
  byte(): number {
    if (this.at >= this.end) throw new MalformedPdu('PDU ends before its fields');
    return this.pdu[this.at++];
  }
  cString(max: number): string {
    const nul = this.pdu.indexOf(0, this.at);
    if (nul < 0 || nul - this.at > max) throw new MalformedPdu('C-octet string unterminated or too long');
    const value = this.pdu.toString('latin1', this.at, nul);
    this.at = nul + 1;
    return value;
  }
  bytes(length: number): Buffer {
    if (this.at + length > this.end) throw new MalformedPdu('PDU ends inside a field');
    const value = this.pdu.subarray(this.at, this.at + length);
    this.at += length;
    return value;
  }
  /** The TLVs left, by tag. */
  tlvs(): Map<number, Buffer> {
    const found = new Map<number, Buffer>();
    while (this.at < this.end) {
      if (this.at + 4 > this.end) throw new MalformedPdu('truncated TLV');
      const tag = this.pdu.readUInt16BE(this.at);
      const length = this.pdu.readUInt16BE(this.at + 2);
      this.at += 4;
      found.set(tag, this.bytes(length));
    }
    return found;
  }
}

export interface Bind {
  systemId: string;
  password: string;
  systemType: string;
}

export function readBind(pdu: Buffer): Bind {
  const r = new Reader(pdu);
  // Longer fields than SMPP allows are read anyway (and then refused as wrong credentials).
  const systemId = r.cString(64);
  const password = r.cString(64);
  const systemType = r.cString(64);
  return { systemId, password, systemType };
}

/** A submit_sm as received: its fields and its TLVs by tag. */
export interface SubmitSm extends SubmitSmFields {
  /** As sent: '' (at once), or SMPP's absolute or relative time (smpp-time.ts). */
  scheduleDeliveryTime: string;
  tlvs: Map<number, Buffer>;
}

/** service_type, then the source address: how submit_sm, data_sm and submit_multi begin. */
function readSource(r: Reader) {
  r.cString(6); // service_type
  const sourceTon = r.byte();
  const sourceNpi = r.byte();
  const source = r.cString(64);
  return { sourceTon, sourceNpi, source };
}

/** The source, then the one destination address, of a submit_sm or a data_sm. */
function readAddresses(r: Reader) {
  const source = readSource(r);
  const destTon = r.byte();
  const destNpi = r.byte();
  const destination = r.cString(64);
  return { ...source, destTon, destNpi, destination };
}

export function readSubmitSm(pdu: Buffer): SubmitSm {
  const r = new Reader(pdu);
  return { ...readAddresses(r), ...readSubmitTail(r) };
}

/** What a submit_sm and a submit_multi carry after their addresses, from esm_class to the TLVs. */
function readSubmitTail(r: Reader) {
  const esmClass = r.byte();
  r.byte(); // protocol_id
  r.byte(); // priority_flag
  const scheduleDeliveryTime = r.cString(17);
  r.cString(17); // validity_period
  const registeredDelivery = r.byte();
  r.byte(); // replace_if_present_flag
  const dataCoding = r.byte();
  r.byte(); // sm_default_msg_id
  const smLength = r.byte();
  const shortMessage = r.bytes(smLength);
  const tlvs = r.tlvs();
  return { esmClass, registeredDelivery, dataCoding, shortMessage, scheduleDeliveryTime, tlvs };
}

/** A destination of a submit_multi given as an SME address (dest_flag 1). */
export interface MultiDestination {
  ton: number;
  npi: number;
  address: string;
}

/** A submit_multi as received: a submit_sm with up to 255 destinations instead of one. */
export interface SubmitMulti extends Omit<SubmitSm, 'destTon' | 'destNpi' | 'destination'> {
  destinations: MultiDestination[];
  /** The distribution list names given (dest_flag 2), which the server does not serve. */
  dlNames: string[];
}

export function readSubmitMulti(pdu: Buffer): SubmitMulti {
  const r = new Reader(pdu);
  const source = readSource(r);
  const count = r.byte();
  const destinations: MultiDestination[] = [];
  const dlNames: string[] = [];
  for (let i = 0; i < count; i++) {
    const flag = r.byte();
    if (flag === 1) {
      const ton = r.byte();
      const npi = r.byte();
      destinations.push({ ton, npi, address: r.cString(64) });
    } else if (flag === 2) dlNames.push(r.cString(64));
    else throw new MalformedPdu(`dest_flag ${flag}`);
  }
  return { ...source, destinations, dlNames, ...readSubmitTail(r) };
}

/**
 * A data_sm, read as the submit_sm it stands for (SMPP 3.4, 4.7.1): the same addresses, esm_class,
 * registered_delivery and data_coding, no short_message (the text is in message_payload, or split by SAR TLVs or
 * a UDH in it) and no schedule_delivery_time.
 */
export function readDataSm(pdu: Buffer): SubmitSm {
  const r = new Reader(pdu);
  const addresses = readAddresses(r);
  const esmClass = r.byte();
  const registeredDelivery = r.byte();
  const dataCoding = r.byte();
  const tlvs = r.tlvs();
  return {
    ...addresses,
    esmClass,
    registeredDelivery,
    dataCoding,
    shortMessage: Buffer.alloc(0),
    scheduleDeliveryTime: '',
    tlvs,
  };
}

/** A query_sm: the message_id a submit_sm_resp gave, and the source_addr it was sent from. */
export interface QuerySm {
  messageId: string;
  source: string;
}

export function readQuerySm(pdu: Buffer): QuerySm {
  const r = new Reader(pdu);
  const messageId = r.cString(64);
  r.byte(); // source_addr_ton
  r.byte(); // source_addr_npi
  const source = r.cString(64);
  return { messageId, source };
}

/**
 * A cancel_sm: the message_id to cancel, or empty to cancel every message from its source to its destination.
 */
export interface CancelSm {
  messageId: string;
  source: string;
  destination: string;
}

export function readCancelSm(pdu: Buffer): CancelSm {
  const r = new Reader(pdu);
  r.cString(6); // service_type
  const messageId = r.cString(64);
  r.byte(); // source_addr_ton
  r.byte(); // source_addr_npi
  const source = r.cString(64);
  r.byte(); // dest_addr_ton
  r.byte(); // dest_addr_npi
  const destination = r.cString(64);
  return { messageId, source, destination };
}

function withHeader(commandId: number, status: number, sequence: number, body: Buffer[]): Buffer {
  const length = headerLength + body.reduce((n, b) => n + b.length, 0);
  const head = Buffer.allocUnsafe(headerLength);
  head.writeUInt32BE(length, 0);
  head.writeUInt32BE(commandId, 4);
  head.writeUInt32BE(status, 8);
  head.writeUInt32BE(sequence, 12);
  return Buffer.concat([head, ...body], length);
}

const cString = (value: string) => Buffer.from(`${value}\0`, 'latin1');

/** A PDU with no body: enquire_link_resp, unbind_resp, generic_nack, unbind. */
export const encodeEmpty = (commandId: number, sequence: number, status = 0): Buffer =>
  withHeader(commandId, status, sequence, []);

/**
 * A bind_*_resp, submit_sm_resp or data_sm_resp: its one C-octet string (system_id, message_id) when accepted;
 * no body when refused (SMPP 3.4, 4.1.2 and 4.4.2; data_sm_resp as submit_sm_resp).
 */
export const encodeResp = (commandId: number, sequence: number, status: number, value: string): Buffer =>
  withHeader(commandId, status, sequence, status === 0 ? [cString(value)] : []);

/** A destination of a submit_multi that was not sent, and the command_status it would have had alone. */
export interface UnsuccessSme extends MultiDestination {
  status: number;
}

/**
 * A submit_multi_resp: the message id and the destinations not sent (no_unsuccess, then each with its
 * error_status_code) when accepted; no body when refused (4.5.2).
 */
export function encodeSubmitMultiResp(
  sequence: number,
  status: number,
  messageId = '',
  unsuccess: readonly UnsuccessSme[] = [],
): Buffer {
  if (status !== 0) return withHeader(Command.submitMultiResp, status, sequence, []);
  const body = [cString(messageId), Buffer.from([unsuccess.length])];
  for (const sme of unsuccess) {
    const code = Buffer.allocUnsafe(4);
    code.writeUInt32BE(sme.status, 0);
    body.push(Buffer.from([sme.ton, sme.npi]), cString(sme.address), code);
  }
  return withHeader(Command.submitMultiResp, 0, sequence, body);
}

/** SMPP 3.4 message_state values (5.2.28). */
export const MessageState = {
  enroute: 1,
  delivered: 2,
  expired: 3,
  deleted: 4,
  undeliverable: 5,
  accepted: 6,
  unknown: 7,
  rejected: 8,
} as const;

export interface QuerySmResp {
  messageId: string;
  /** When the message reached its final state, in SMPP's absolute time format; '' before. */
  finalDate: string;
  messageState: number;
  errorCode: number;
}

/** A query_sm_resp: its fields when the message was found; no body when the query failed (4.8.2). */
export function encodeQuerySmResp(sequence: number, status: number, resp?: QuerySmResp): Buffer {
  if (status !== 0 || !resp) return withHeader(Command.querySmResp, status, sequence, []);
  return withHeader(Command.querySmResp, 0, sequence, [
    cString(resp.messageId),
    cString(resp.finalDate),
    Buffer.from([resp.messageState, resp.errorCode]),
  ]);
}

function tlv(tag: number, value: Buffer): Buffer {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt16BE(tag, 0);
  head.writeUInt16BE(value.length, 2);
  return Buffer.concat([head, value]);
}

export interface DeliverSm {
  source: string;
  destination: string;
  esmClass: number;
  dataCoding: number;
  text: Buffer;
  receiptedMessageId?: string;
  messageState?: number;
}

export function encodeDeliverSm(sequence: number, sm: DeliverSm): Buffer {
  const inPayload = sm.text.length > maxShortMessage;
  const fields = Buffer.concat([
    cString(''), // service_type
    Buffer.from([1, 1]), // source_addr_ton international, npi E.164
    cString(sm.source),
    Buffer.from([0, 0]),
    cString(sm.destination),
    Buffer.from([sm.esmClass, 0, 0]), // esm_class, protocol_id, priority_flag
    cString(''), // schedule_delivery_time
    cString(''), // validity_period
    Buffer.from([0, 0, sm.dataCoding, 0, inPayload ? 0 : sm.text.length]),
  ]);
  const body: Buffer[] = [fields];
  if (!inPayload) body.push(sm.text);
  if (sm.receiptedMessageId !== undefined)
    body.push(tlv(Tag.receiptedMessageId, cString(sm.receiptedMessageId)));
  if (sm.messageState !== undefined) body.push(tlv(Tag.messageState, Buffer.from([sm.messageState])));
  if (inPayload) body.push(tlv(Tag.messagePayload, sm.text));
  return withHeader(Command.deliverSm, 0, sequence, body);
}
