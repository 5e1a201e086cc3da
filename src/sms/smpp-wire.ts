// What both ends of SMPP 3.4 in Pigeon share: the header every PDU starts with, its bounds, the TLV tags
// Pigeon reads or writes, and the fields of a submit_sm. The delivery worker's client (src/delivery/smpp)
// sends submit_sm; Pigeon's SMPP server (src/smpp-server) receives them.

/** The command_id of each PDU either end sends or answers. */
export const CommandId = {
  genericNack: 0x80000000,
  bindReceiver: 0x00000001,
  bindReceiverResp: 0x80000001,
  bindTransmitter: 0x00000002,
  bindTransmitterResp: 0x80000002,
  bindTransceiver: 0x00000009,
  bindTransceiverResp: 0x80000009,
  querySm: 0x00000003,
  querySmResp: 0x80000003,
  submitSm: 0x00000004,
  submitSmResp: 0x80000004,
  deliverSm: 0x00000005,
  deliverSmResp: 0x80000005,
  cancelSm: 0x00000008,
  cancelSmResp: 0x80000008,
  unbind: 0x00000006,
  unbindResp: 0x80000006,
  enquireLink: 0x00000015,
  enquireLinkResp: 0x80000015,
  dataSm: 0x00000103,
  dataSmResp: 0x80000103,
  submitMulti: 0x00000021,
  submitMultiResp: 0x80000021,
  alertNotification: 0x00000102,
} as const;

export const headerLength = 16;
/** Larger PDUs are refused as a broken stream: a submit_sm or deliver_sm is at most a few hundred bytes. */
export const maxPduLength = 65_536;
/** The most a short_message field holds; longer text goes in the message_payload TLV. */
export const maxShortMessage = 254;

export const Tag = {
  receiptedMessageId: 0x001e,
  sarMsgRefNum: 0x020c,
  sarTotalSegments: 0x020e,
  sarSegmentSeqnum: 0x020f,
  messagePayload: 0x0424,
  messageState: 0x0427,
} as const;

export interface PduHeader {
  length: number;
  commandId: number;
  status: number;
  sequence: number;
}

export function readHeader(buffer: Buffer, offset = 0): PduHeader {
  return {
    length: buffer.readUInt32BE(offset),
    commandId: buffer.readUInt32BE(offset + 4),
    status: buffer.readUInt32BE(offset + 8),
    sequence: buffer.readUInt32BE(offset + 12),
  };
}

export interface SubmitSmFields {
  sourceTon: number;
  sourceNpi: number;
  source: string;
  destTon: number;
  destNpi: number;
  destination: string;
  esmClass: number;
  registeredDelivery: number;
  dataCoding: number;
  shortMessage: Buffer;
}
