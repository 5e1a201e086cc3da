import { afterEach, describe, expect, it } from 'vitest';
import { buildParts } from '../../src/delivery/outbound-parts.ts';
import { type SmppOptions, SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import type { InboundMessage, Receipt } from '../../src/delivery/transport.ts';
import { TestSmsc, testSmppOptions } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

const quiet = { info() {}, warn() {}, error() {} };

/** The tests' SMPP options, with this file's reconnect bound and backpressure retries. */
const options = (url: string, overrides: Partial<SmppOptions> = {}): SmppOptions =>
  testSmppOptions(url, { reconnectMaxMs: 200, backpressureRetries: 5, ...overrides });

describe('SMPP transport against a loopback SMSC', () => {
  const receipts: Receipt[] = [];
  const inbound: InboundMessage[] = [];
  const handler = {
    onReceipt: async (r: Receipt) => void receipts.push(r),
    onInbound: async (m: InboundMessage) => void inbound.push(m),
  };
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    receipts.length = 0;
    inbound.length = 0;
  });

  async function setup(
    smscOptions: ConstructorParameters<typeof TestSmsc>[0] = {},
    overrides: Partial<SmppOptions> = {},
  ) {
    const smsc = await new TestSmsc(smscOptions).listen();
    cleanups.push(() => smsc.close());
    const transport = new SmppTransport(options(smsc.url, overrides), quiet);
    cleanups.push(() => transport.stop());
    await transport.start(handler);
    return { smsc, transport };
  }

  it('submits GSM-7 with data_coding 0, an alphanumeric sender as TON 5, and gets the message id', async () => {
    const { smsc, transport } = await setup();
    await waitFor(() => transport.ready(), 'bind');
    const [part] = buildParts({
      recipient: '33612345678',
      sender: 'Pigeon',
      text: 'Hello {world} €',
      encoding: 'gsm7',
      ref: 1,
    });
    const outcome = await transport.submit(part);
    expect(outcome).toEqual({ ok: true, smscId: smsc.submits[0].messageId });
    const sent = smsc.submits[0];
    expect(sent).toMatchObject({
      destination: '33612345678',
      source: 'Pigeon',
      sourceTon: 5,
      sourceNpi: 0,
      dataCoding: 0,
    });
    expect(sent.udh).toBeUndefined();
    // GSM 03.38 septets, unpacked: { } and € are escape pairs.
    expect([...sent.payload]).toEqual([
      0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x1b, 0x28, 0x77, 0x6f, 0x72, 0x6c, 0x64, 0x1b, 0x29, 0x20, 0x1b,
      0x65,
    ]);
  });

  it('a numeric sender goes out as international TON 1 / NPI 1', async () => {
    const { smsc, transport } = await setup();
    await waitFor(() => transport.ready(), 'bind');
    await transport.submit(
      buildParts({ recipient: '33600000001', sender: '33700000000', text: 'x', encoding: 'gsm7', ref: 1 })[0],
    );
    expect(smsc.submits[0]).toMatchObject({ sourceTon: 1, sourceNpi: 1, source: '33700000000' });
  });

  it('splits a long UCS-2 message into parts with a concatenation UDH and data_coding 8', async () => {
    const { smsc, transport } = await setup();
    await waitFor(() => transport.ready(), 'bind');
    const text = `Привет 👋 ${'ж'.repeat(150)}`;
    const parts = buildParts({ recipient: '33612345678', sender: null, text, encoding: 'ucs2', ref: 77 });
    expect(parts).toHaveLength(3);
    for (const part of parts) expect((await transport.submit(part)).ok).toBe(true);
    expect(smsc.submits.map((s) => s.dataCoding)).toEqual([8, 8, 8]);
    expect(smsc.submits.map((s) => s.esmClass & 0x40)).toEqual([0x40, 0x40, 0x40]);
    expect(smsc.submits.map((s) => [...s.udh!])).toEqual([
      [5, 0, 3, 77, 3, 1],
      [5, 0, 3, 77, 3, 2],
      [5, 0, 3, 77, 3, 3],
    ]);
    const decoded = smsc.submits.map((s) => Buffer.from(s.payload).swap16().toString('utf16le')).join('');
    expect(decoded).toBe(text);
    expect(smsc.submits.every((s) => s.payload.length <= 134)).toBe(true);
  });

  it('bad credentials never bind and are retried with backoff', async () => {
    const smsc = await new TestSmsc({ password: 'right' }).listen();
    cleanups.push(() => smsc.close());
    const transport = new SmppTransport(options(smsc.url.replace(':right@', ':wrong@')), quiet);
    cleanups.push(() => transport.stop());
    await transport.start(handler);
    await waitFor(() => smsc.bindAttempts >= 3, 'three bind attempts');
    expect(transport.ready()).toBe(false);
  });

  it('keeps at most `window` submits in flight per bind', async () => {
    const { smsc, transport } = await setup({}, { window: 4, binds: 2 });
    await waitFor(() => smsc.sessions.size === 2 && transport.ready(), 'two binds');
    smsc.holdResponses = true;
    const part = buildParts({
      recipient: '33612345678',
      sender: null,
      text: 'w',
      encoding: 'gsm7',
      ref: 1,
    })[0];
    const outcomes = Array.from({ length: 20 }, () => transport.submit(part));
    await waitFor(() => smsc.submits.length >= 8, 'two full windows');
    expect(smsc.submits).toHaveLength(8);
    expect(smsc.maxInFlight).toBe(8);
    smsc.holdResponses = false;
    while (smsc.submits.length < 20) {
      smsc.release();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    smsc.release();
    expect((await Promise.all(outcomes)).every((o) => o.ok)).toBe(true);
    expect(smsc.maxInFlight).toBeLessThanOrEqual(8);
  });

  it('a throttled submit backs off and is offered again', async () => {
    const { smsc, transport } = await setup({ refuse: { status: 0x58, count: 2 } });
    await waitFor(() => transport.ready(), 'bind');
    const part = buildParts({
      recipient: '33612345678',
      sender: null,
      text: 't',
      encoding: 'gsm7',
      ref: 1,
    })[0];
    expect((await transport.submit(part)).ok).toBe(true);
    expect(smsc.submits).toHaveLength(1);
  });

  it('a permanent refusal is final with its DLR status', async () => {
    const { transport } = await setup({ refuse: { status: 0x0b, count: 1 } });
    await waitFor(() => transport.ready(), 'bind');
    const part = buildParts({
      recipient: '33612345678',
      sender: null,
      text: 't',
      encoding: 'gsm7',
      ref: 1,
    })[0];
    expect(await transport.submit(part)).toMatchObject({ ok: false, retry: false, dlrStatus: 5 });
  });

  it('delivers receipts in text form (hex id) and TLV form (decimal id) to the handler', async () => {
    for (const [form, idFormat] of [
      ['text', 'hex'],
      ['tlv', 'dec'],
    ] as const) {
      const { smsc, transport } = await setup({
        receipts: form,
        idFormat,
        outcome: () => ({ stat: 'UNDELIV', err: '001' }),
      });
      await waitFor(() => transport.ready(), 'bind');
      const part = buildParts({
        recipient: '33612345678',
        sender: null,
        text: 'r',
        encoding: 'gsm7',
        ref: 1,
      })[0];
      const outcome = await transport.submit(part);
      expect(outcome).toEqual({ ok: true, smscId: smsc.submits[0].messageId });
      await waitFor(() => receipts.length > 0, `${form} receipt`);
      // The TLV form carries the id as submit_sm_resp gave it, and no error code.
      expect(receipts.pop()).toEqual({
        smscId: smsc.submits[0].messageId,
        stat: 'UNDELIV',
        err: form === 'text' ? '001' : null,
      });
    }
  });

  it('passes MO messages and their concatenation info to the handler', async () => {
    const { smsc, transport } = await setup();
    await waitFor(() => transport.ready(), 'bind');
    smsc.sendMo('33611111111', '36180', 'STOP');
    smsc.sendMo('33622222222', '36180', 'Bonjour, ceci est une réponse longue', 2, 9);
    await waitFor(() => inbound.length === 3, 'three MO parts');
    expect(inbound[0]).toEqual({ from: '33611111111', to: '36180', text: 'STOP', part: undefined });
    expect(inbound.slice(1).map((m) => m.part)).toEqual([
      { ref: 9, total: 2, seq: 1 },
      { ref: 9, total: 2, seq: 2 },
    ]);
    expect(
      inbound
        .slice(1)
        .map((m) => m.text)
        .join(''),
    ).toBe('Bonjour, ceci est une réponse longue');
  });

  it('reconnects after the SMSC drops every connection', async () => {
    const { smsc, transport } = await setup();
    await waitFor(() => transport.ready(), 'bind');
    const attempts = smsc.bindAttempts;
    smsc.dropAll();
    await waitFor(() => smsc.bindAttempts > attempts && transport.ready(), 'rebind');
    const part = buildParts({
      recipient: '33612345678',
      sender: null,
      text: 'again',
      encoding: 'gsm7',
      ref: 1,
    })[0];
    expect((await transport.submit(part)).ok).toBe(true);
  });
});
