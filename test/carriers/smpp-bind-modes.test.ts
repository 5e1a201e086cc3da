// Bind mode transmitter-receiver: each bind slot is a bind_transmitter connection, which carries the
// submits, and a bind_receiver connection, which carries the receipts and MOs; readiness and capacity count
// the transmitters only.
import { afterEach, describe, expect, it } from 'vitest';
import { buildParts } from '../../src/delivery/outbound-parts.ts';
import { SmppTransport, type SmppTransportOptions } from '../../src/delivery/smpp/smpp-transport.ts';
import type { InboundMessage, Receipt } from '../../src/delivery/transport.ts';
import { type SmscBindRole, TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

const quiet = { info() {}, warn() {}, error() {} };

describe('SMPP bind mode transmitter-receiver', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(overrides: Partial<SmppTransportOptions> = {}) {
    const smsc = await new TestSmsc().listen();
    cleanups.push(() => smsc.close());
    const receipts: Receipt[] = [];
    const inbound: InboundMessage[] = [];
    const transport = new SmppTransport(
      {
        name: 'split',
        url: smsc.url,
        bindMode: 'transmitter-receiver',
        binds: 2,
        window: 5,
        tps: 0,
        enquireLinkMs: 30_000,
        responseTimeoutMs: 5_000,
        reconnectMinMs: 20,
        reconnectMaxMs: 100,
        backpressureRetries: 1,
        ...overrides,
      },
      quiet,
    );
    cleanups.push(() => transport.stop());
    await transport.start({
      onReceipt: async (r) => void receipts.push(r),
      onInbound: async (m) => void inbound.push(m),
    });
    const roleCount = (role: SmscBindRole) => [...smsc.roles.values()].filter((r) => r === role).length;
    await waitFor(
      () => roleCount('transmitter') === 2 && roleCount('receiver') === 2 && transport.status().bindsUp === 4,
      'two transmitters and two receivers bound',
    );
    return { smsc, transport, receipts, inbound, roleCount };
  }

  const sessionsOf = (smsc: TestSmsc, role: SmscBindRole) =>
    [...smsc.roles].filter(([, r]) => r === role).map(([session]) => session);

  it('binds a transmitter and a receiver per slot, submits on the transmitters only, and receives every receipt on a receiver', async () => {
    const { smsc, transport, receipts, roleCount } = await setup();
    expect(roleCount('transceiver')).toBe(0);
    expect(transport.capacity).toBe(10);
    expect(transport.status()).toMatchObject({ name: 'split', state: 'bound', bindsUp: 4, bindsTotal: 4 });
    const transmitterPorts = new Set(sessionsOf(smsc, 'transmitter').map((s) => s.socket.remotePort));

    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        transport.submit(
          buildParts({
            recipient: `3361234560${i}`,
            sender: 'Pigeon',
            text: 'hi',
            encoding: 'gsm7',
            ref: i,
          })[0],
        ),
      ),
    );
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(smsc.submits).toHaveLength(8);
    expect(smsc.submits.every((s) => transmitterPorts.has(s.clientPort))).toBe(true);
    // Round-robin over the two transmitters.
    expect(new Set(smsc.submits.map((s) => s.clientPort)).size).toBe(2);

    await waitFor(() => receipts.length === 8, 'eight receipts');
    expect(smsc.receiptsSentOn).toEqual(Array(8).fill('receiver'));
    expect(new Set(receipts.map((r) => r.smscId))).toEqual(new Set(smsc.submits.map((s) => s.messageId)));
  });

  it('an MO arrives on a receiver bind', async () => {
    const { smsc, inbound } = await setup();
    smsc.sendMo('33699887766', '38001', 'hello back');
    await waitFor(() => inbound.length === 1, 'the MO');
    expect(inbound[0]).toMatchObject({ from: '33699887766', to: '38001', text: 'hello back' });
  });

  it('readiness follows the transmitters: receivers alone cannot submit, transmitters alone can', async () => {
    // Binds lost stay lost for the test: no reconnection within it.
    const { smsc, transport } = await setup({ reconnectMinMs: 60_000, reconnectMaxMs: 60_000 });
    for (const session of sessionsOf(smsc, 'receiver')) session.destroy();
    await waitFor(() => transport.status().bindsUp === 2, 'the receivers gone');
    expect(transport.ready()).toBe(true);
    expect(transport.status().state).toBe('bound');
    expect(transport.usage()).toMatchObject({ bindsUp: 2, binds: 4, windowSize: 10 });
    expect(
      (
        await transport.submit(
          buildParts({ recipient: '33600000009', sender: null, text: 'x', encoding: 'gsm7', ref: 1 })[0],
        )
      ).ok,
    ).toBe(true);

    for (const session of sessionsOf(smsc, 'transmitter')) session.destroy();
    await waitFor(() => transport.status().bindsUp === 0, 'the transmitters gone');
    expect(transport.ready()).toBe(false);
    expect(transport.status()).toMatchObject({ state: 'down', lastError: expect.stringContaining('closed') });
  });

  it('in transceiver mode (the default) one bind_transceiver per slot does both', async () => {
    const smsc = await new TestSmsc().listen();
    cleanups.push(() => smsc.close());
    const receipts: Receipt[] = [];
    const transport = new SmppTransport(
      {
        url: smsc.url,
        binds: 2,
        window: 5,
        tps: 0,
        enquireLinkMs: 30_000,
        responseTimeoutMs: 5_000,
        reconnectMinMs: 20,
        reconnectMaxMs: 100,
        backpressureRetries: 1,
      },
      quiet,
    );
    cleanups.push(() => transport.stop());
    await transport.start({ onReceipt: async (r) => void receipts.push(r), onInbound: async () => {} });
    await waitFor(() => transport.status().bindsUp === 2, 'two transceivers');
    expect([...smsc.roles.values()]).toEqual(['transceiver', 'transceiver']);
    expect(transport.status()).toMatchObject({ name: 'default', bindsTotal: 2 });
    await transport.submit(
      buildParts({ recipient: '33600000008', sender: null, text: 'x', encoding: 'gsm7', ref: 1 })[0],
    );
    await waitFor(() => receipts.length === 1, 'the receipt');
    expect(smsc.receiptsSentOn).toEqual(['transceiver']);
  });
});
