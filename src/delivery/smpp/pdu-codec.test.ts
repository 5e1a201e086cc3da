import { once } from 'node:events';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import smpp from 'smpp';
import { describe, expect, it } from 'vitest';
import {
  CommandId,
  encodeBind,
  encodeBindTransceiver,
  encodeDeliverSmResp,
  encodeSubmitSm,
  readDeliverSm,
  readHeader,
  readSubmitSmResp,
} from './pdu-codec.ts';
import { SmppSession } from './session.ts';

const submit = {
  sourceTon: 5,
  sourceNpi: 0,
  source: 'Pigeon',
  destTon: 1,
  destNpi: 1,
  destination: '33612345678',
  esmClass: 0x40,
  registeredDelivery: 1,
  dataCoding: 8,
  shortMessage: Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, 0x01, 0x00, 0x48, 0x00, 0xe9]),
};

describe('SMPP PDU codec', () => {
  it('writes a submit_sm that the smpp package reads field for field', () => {
    const pdu = new smpp.PDU(encodeSubmitSm(7, submit));
    expect(pdu).toMatchObject({
      command: 'submit_sm',
      sequence_number: 7,
      service_type: '',
      source_addr_ton: 5,
      source_addr_npi: 0,
      source_addr: 'Pigeon',
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: '33612345678',
      esm_class: 0x40,
      registered_delivery: 1,
      data_coding: 8,
    });
    const message = pdu.short_message as { udh: Buffer[]; message: string };
    expect(message.udh[0]).toEqual(Buffer.from([0x00, 0x03, 0x2a, 0x02, 0x01]));
    expect(message.message).toBe('Hé');
  });

  it('puts a text longer than short_message holds in message_payload', () => {
    const long = Buffer.alloc(300, 0x41);
    const pdu = new smpp.PDU(
      encodeSubmitSm(1, { ...submit, esmClass: 0, dataCoding: 0, shortMessage: long }),
    );
    expect((pdu.message_payload as { message: string }).message).toBe('A'.repeat(300));
  });

  it('writes bind_transmitter and bind_receiver as the package reads them', () => {
    const fields = { systemId: 'pigeon', password: 'secret', systemType: 'VMA' };
    for (const [commandId, command] of [
      [CommandId.bindTransmitter, 'bind_transmitter'],
      [CommandId.bindReceiver, 'bind_receiver'],
    ] as const) {
      expect(new smpp.PDU(encodeBind(commandId, 4, fields))).toMatchObject({
        command,
        sequence_number: 4,
        system_id: 'pigeon',
        password: 'secret',
        system_type: 'VMA',
        interface_version: 0x34,
      });
    }
  });

  it('writes bind_transceiver and deliver_sm_resp as the package reads them', () => {
    const bind = new smpp.PDU(
      encodeBindTransceiver(3, { systemId: 'pigeon', password: 'secret', systemType: 'sms' }),
    );
    expect(bind).toMatchObject({
      command: 'bind_transceiver',
      sequence_number: 3,
      system_id: 'pigeon',
      password: 'secret',
      system_type: 'sms',
      interface_version: 0x34,
      address_range: '',
    });
    const resp = new smpp.PDU(encodeDeliverSmResp(9, 8));
    expect(resp).toMatchObject({ command: 'deliver_sm_resp', command_status: 8, sequence_number: 9 });
    expect(readHeader(encodeDeliverSmResp(9))).toEqual({
      length: 17,
      commandId: CommandId.deliverSmResp,
      status: 0,
      sequence: 9,
    });
  });

  it('reads a receipt deliver_sm with its TLVs, and a submit_sm_resp message id', () => {
    const receipt = new smpp.PDU('deliver_sm', {
      sequence_number: 42,
      source_addr: '33612345678',
      destination_addr: 'Pigeon',
      esm_class: 0x04,
      short_message:
        'id:1a2b sub:001 dlvrd:001 submit date:2311230312 done date:2311230312 stat:DELIVRD err:000',
      receipted_message_id: '6699',
      message_state: 2,
    }).toBuffer();
    expect(readDeliverSm(receipt)).toMatchObject({
      sequence: 42,
      source: '33612345678',
      destination: 'Pigeon',
      esmClass: 0x04,
      receiptedMessageId: '6699',
      messageState: 2,
    });
    expect(readDeliverSm(receipt)?.shortMessage.toString('latin1')).toContain('stat:DELIVRD err:000');
    // A PDU cut inside a TLV's value is refused rather than read past its end.
    const cut = Buffer.from(receipt.subarray(0, receipt.length - 1));
    cut.writeUInt32BE(cut.length, 0);
    expect(readDeliverSm(cut)).toBeUndefined();

    const resp = new smpp.PDU('submit_sm_resp', { sequence_number: 5, message_id: 'abc123' }).toBuffer();
    expect(readSubmitSmResp(resp)).toBe('abc123');
    expect(readSubmitSmResp(new smpp.PDU('submit_sm_resp', { command_status: 0x58 }).toBuffer())).toBe('');
  });
});

describe('SMPP session framing', () => {
  async function peer(onSocket: (socket: Socket) => void) {
    const server = createServer(onSocket);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { server, port: (server.address() as AddressInfo).port };
  }

  it('reads PDUs split across reads and several in one read, and refuses unknown requests', async () => {
    const receipt = (seq: number) =>
      new smpp.PDU('deliver_sm', {
        sequence_number: seq,
        esm_class: 4,
        short_message: `id:${seq} stat:DELIVRD`,
      }).toBuffer();
    const unknown = Buffer.alloc(16);
    unknown.writeUInt32BE(16, 0);
    unknown.writeUInt32BE(0x00000103, 4); // data_sm: not for this client
    unknown.writeUInt32BE(77, 12);
    const answers: Buffer[] = [];
    const { server, port } = await peer((socket) => {
      socket.on('data', (chunk) => answers.push(chunk));
      // One byte at a time, then two whole PDUs in one write, then an unknown request.
      const first = receipt(1);
      for (const byte of first) socket.write(Buffer.from([byte]));
      socket.write(Buffer.concat([receipt(2), receipt(3), unknown]));
    });
    const delivered: number[] = [];
    let session: SmppSession | undefined;
    const closed = new Promise<void>((resolve) => {
      session = new SmppSession('127.0.0.1', port, {
        connect() {},
        deliver(pdu) {
          const fields = readDeliverSm(pdu);
          delivered.push(fields?.sequence ?? -1);
          session?.answerDeliver(fields?.sequence ?? 0);
        },
        error() {},
        close: resolve,
      });
    });
    try {
      await expect.poll(() => delivered).toEqual([1, 2, 3]);
      await expect.poll(() => Buffer.concat(answers).length).toBe(17 * 3 + 16);
      const all = Buffer.concat(answers);
      expect([0, 17, 34].map((at) => readHeader(all, at).sequence)).toEqual([1, 2, 3]);
      expect(readHeader(all, 51)).toEqual({
        length: 16,
        commandId: CommandId.genericNack,
        status: 3,
        sequence: 77,
      });
    } finally {
      session?.destroy();
      await closed;
      server.close();
    }
  });

  it('drops a connection whose PDU length is impossible', async () => {
    const { server, port } = await peer((socket) => socket.write(Buffer.from([0, 0, 0, 3, 1, 2, 3, 4])));
    const errors: string[] = [];
    await new Promise<void>((resolve) => {
      new SmppSession('127.0.0.1', port, {
        connect() {},
        deliver() {},
        error: (error) => errors.push(error.message),
        close: resolve,
      });
    });
    server.close();
    expect(errors).toEqual(['SMPP stream broken: a PDU of 3 bytes']);
  });
});
