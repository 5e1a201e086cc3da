// A connector's own SMPP settings: system_type in the bind, default TON/NPI of the addresses, its enquire_link
// interval, and its name in every log line.
import { afterEach, describe, expect, it } from 'vitest';
import { buildParts } from '../../src/delivery/outbound-parts.ts';
import { SmppTransport, type SmppTransportOptions } from '../../src/delivery/smpp/smpp-transport.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

describe('SMPP connector options', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(overrides: Partial<SmppTransportOptions>) {
    const smsc = await new TestSmsc().listen();
    cleanups.push(() => smsc.close());
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const record = (obj: object, msg: string) =>
      void lines.push({ obj: obj as Record<string, unknown>, msg });
    const transport = new SmppTransport(
      {
        url: smsc.url,
        binds: 1,
        window: 5,
        tps: 0,
        enquireLinkMs: 30_000,
        responseTimeoutMs: 5_000,
        reconnectMinMs: 20,
        reconnectMaxMs: 100,
        backpressureRetries: 1,
        ...overrides,
      },
      { info: record, warn: record, error: record },
    );
    cleanups.push(() => transport.stop());
    await transport.start({ onReceipt: async () => {}, onInbound: async () => {} });
    await waitFor(() => transport.ready(), 'the bind');
    return { smsc, transport, lines };
  }

  const part = (sender: string | null) =>
    buildParts({ recipient: '33612345678', sender, text: 'x', encoding: 'gsm7', ref: 1 })[0];

  it('defaultTon/defaultNpi go on the destination and a numeric sender; an alphanumeric sender stays 5/0', async () => {
    const { smsc, transport } = await setup({ defaultTon: 0, defaultNpi: 1 });
    await transport.submit(part('33700000000'));
    await transport.submit(part('Pigeon'));
    expect(smsc.submits[0]).toMatchObject({ destTon: 0, destNpi: 1, sourceTon: 0, sourceNpi: 1 });
    expect(smsc.submits[1]).toMatchObject({ destTon: 0, destNpi: 1, sourceTon: 5, sourceNpi: 0 });
  });

  it('without defaults, addresses are international (1/1) as before', async () => {
    const { smsc, transport } = await setup({});
    await transport.submit(part('33700000000'));
    expect(smsc.submits[0]).toMatchObject({ destTon: 1, destNpi: 1, sourceTon: 1, sourceNpi: 1 });
  });

  it('binds with its system_type, keeps the link alive at its own enquire interval, and names itself in its logs', async () => {
    const { smsc, lines } = await setup({ name: 'carrier-fr', systemType: 'VMA', enquireLinkMs: 30 });
    expect(smsc.systemTypes).toEqual(['VMA']);
    await waitFor(() => smsc.enquireLinks >= 3, 'three enquire_link within a fraction of a second');
    const bound = lines.find((l) => l.msg.startsWith('SMPP bound'));
    expect(bound?.obj).toMatchObject({ connector: 'carrier-fr', host: '127.0.0.1', port: smsc.port });
    smsc.dropAll();
    await waitFor(() => lines.some((l) => /lost|closed|error/.test(l.msg)), 'a log of the drop');
    expect(lines.every((l) => l.obj.connector === 'carrier-fr')).toBe(true);
  });
});
