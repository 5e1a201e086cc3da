// The server's reading of data_sm and submit_multi against the `smpp` package's encoding of them: data_sm has the
// fields a submit_sm has, no short_message nor schedule, the TLVs by tag; submit_multi its destinations, SME
// addresses and distribution list names apart. A body cut short, or a dest_flag neither 1 nor 2, is malformed
// (answered ESME_RINVCMDLEN).
import smpp from 'smpp';
import { describe, expect, it } from 'vitest';
import { Tag } from '../sms/smpp-wire.ts';
import { fieldsOf, readDataSm, readSubmitMulti } from './pdu.ts';

describe('readDataSm', () => {
  const pdu = new smpp.PDU('data_sm', {
    sequence_number: 7,
    source_addr_ton: 5,
    source_addr_npi: 0,
    source_addr: 'MyShop',
    dest_addr_ton: 1,
    dest_addr_npi: 1,
    destination_addr: '33612345678',
    esm_class: 0,
    registered_delivery: 1,
    data_coding: 8,
    message_payload: Buffer.from([0, 0x48, 0, 0x69]),
    sar_msg_ref_num: 300,
    sar_total_segments: 2,
    sar_segment_seqnum: 1,
  }).toBuffer();

  it('reads the addresses, esm_class, registered_delivery, data_coding and the TLVs', () => {
    const sm = readDataSm(pdu);
    expect(sm).toMatchObject({
      sourceTon: 5,
      source: 'MyShop',
      destTon: 1,
      destNpi: 1,
      destination: '33612345678',
      esmClass: 0,
      registeredDelivery: 1,
      dataCoding: 8,
      scheduleDeliveryTime: '',
    });
    expect(sm.shortMessage.length).toBe(0);
    expect([...sm.tlvs.get(Tag.messagePayload)!]).toEqual([0, 0x48, 0, 0x69]);
    expect(sm.tlvs.get(Tag.sarMsgRefNum)!.readUInt16BE(0)).toBe(300);
  });

  it('finds a body cut before its data_coding, or inside a TLV’s header, malformed', () => {
    const cut = (length: number) => {
      const short = Buffer.from(pdu.subarray(0, length));
      short.writeUInt32BE(length, 0);
      return fieldsOf(readDataSm, short);
    };
    const fixedEnd = 16 + 1 + 2 + 'MyShop'.length + 1 + 2 + '33612345678'.length + 1 + 3;
    expect(cut(fixedEnd)).toBeDefined();
    expect(cut(fixedEnd - 1)).toBeUndefined();
    expect(cut(fixedEnd + 3)).toBeUndefined();
  });
});

describe('readSubmitMulti', () => {
  const pdu = new smpp.PDU('submit_multi', {
    source_addr: 'MyShop',
    dest_address: [
      { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '33612345678' },
      { dl_name: 'customers' },
      { dest_addr_ton: 0, dest_addr_npi: 0, destination_addr: '33612345679' },
    ],
    registered_delivery: 1,
    data_coding: 0,
    short_message: Buffer.from('hi'),
  }).toBuffer();

  it('reads SME addresses and distribution list names apart, then the fields of a submit_sm', () => {
    const sm = readSubmitMulti(pdu);
    expect(sm.destinations).toEqual([
      { ton: 1, npi: 1, address: '33612345678' },
      { ton: 0, npi: 0, address: '33612345679' },
    ]);
    expect(sm.dlNames).toEqual(['customers']);
    expect(sm).toMatchObject({ source: 'MyShop', registeredDelivery: 1, dataCoding: 0 });
    expect(sm.shortMessage.toString()).toBe('hi');
  });

  it('finds a dest_flag neither 1 nor 2 malformed', () => {
    const bad = Buffer.from(pdu);
    const flagAt = 16 + 1 + 2 + 'MyShop'.length + 1 + 1;
    expect(bad[flagAt]).toBe(1);
    bad[flagAt] = 3;
    expect(fieldsOf(readSubmitMulti, bad)).toBeUndefined();
  });
});
