import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/helpers/wait.ts';
import { loadConfig } from '../../config.ts';
import type { InboundMessage, OutboundPart, Receipt } from '../transport.ts';
import { createTransport } from '../transports.ts';
import { readRoutingTable } from './connectors-file.ts';
import { isRoutingRefusal, type RouterTransport } from './router-transport.ts';

const config = loadConfig({ DATABASE_URL: ':memory:' });
const quiet = { info() {}, warn() {}, error() {} };

function part(destination: string, overrides: Partial<OutboundPart> = {}): OutboundPart {
  return {
    destination,
    sender: 'Shop',
    dataCoding: 0,
    payload: Uint8Array.of(0x48, 0x69),
    context: { messageId: Number(destination.slice(-6)), accountId: 1, pushtype: 'alert' },
    ...overrides,
  };
}

describe('router over simulators', () => {
  const started: RouterTransport[] = [];
  afterEach(async () => {
    for (const t of started.splice(0)) await t.stop();
  });

  async function router(routes: unknown[]) {
    const table = readRoutingTable(
      {
        connectors: [
          { name: 'a', url: 'simulator', dlrDelayMs: 0, outcomes: 'DELIVRD=1' },
          { name: 'b', url: 'simulator', dlrDelayMs: 0, outcomes: 'DELIVRD=1' },
        ],
        routes,
      },
      config,
      '/tmp/connectors.yaml',
    );
    const transport = createTransport(config, quiet, undefined, table);
    const receipts: Receipt[] = [];
    const inbound: InboundMessage[] = [];
    await transport.start({
      onReceipt: async (r) => void receipts.push(r),
      onInbound: async (m) => void inbound.push(m),
    });
    started.push(transport);
    return { transport, receipts };
  }

  it('is ready when any connector is, and can hold as many submits as its connectors together', async () => {
    const { transport } = await router([{ name: 'all', connectors: ['a', 'b'] }]);
    expect(transport.ready()).toBe(true);
    expect(transport.capacity).toBe(2000);
    expect(transport.name).toBe('simulator');
  });

  it('a part no route takes is refused for good with DLR 7 (route not available)', async () => {
    const { transport } = await router([{ name: 'fr', match: { prefix: ['33'] }, connectors: ['a'] }]);
    expect(await transport.submit(part('4915112345678'))).toEqual({
      ok: false,
      retry: false,
      dlrStatus: 7,
      error: 'no route of CONNECTORS_FILE accepts this message',
      noRoute: true,
    });
  });

  it('weighted 3:1 shares exactly 3:1 over 400 parts, and each receipt names the connector it came from', async () => {
    const { transport, receipts } = await router([
      { name: 'all', connectors: ['a', 'b'], strategy: 'weighted', weights: [3, 1] },
    ]);
    const counts = { a: 0, b: 0 } as Record<string, number>;
    for (let i = 0; i < 400; i++) {
      const outcome = await transport.submit(part(`33612${String(100000 + i)}`));
      if (!outcome.ok) throw new Error(outcome.error);
      expect(outcome.route).toBe('all');
      counts[outcome.connector!]++;
    }
    expect(counts).toEqual({ a: 300, b: 100 });
    await waitFor(() => receipts.length === 400, 'every receipt');
    expect(receipts.filter((r) => r.connector === 'a')).toHaveLength(300);
    expect(receipts.filter((r) => r.connector === 'b')).toHaveLength(100);
  });

  it('the later parts of a message follow its first part, whatever the weights say', async () => {
    const { transport } = await router([
      { name: 'all', connectors: ['a', 'b'], strategy: 'weighted', weights: [1, 1] },
    ]);
    for (let m = 0; m < 10; m++) {
      const destination = `33612${String(200000 + m)}`;
      const used = new Set<string>();
      for (let seq = 1; seq <= 3; seq++) {
        const outcome = await transport.submit(
          part(destination, { udh: Uint8Array.of(0x05, 0x00, 0x03, m, 3, seq) }),
        );
        if (!outcome.ok) throw new Error(outcome.error);
        used.add(outcome.connector!);
      }
      expect(used.size).toBe(1);
    }
  });
});

describe('which refusals another connector may take', () => {
  const refusal = { ok: false, retry: false, dlrStatus: 6, error: 'refused' } as const;

  it('an SMSC answering ESME_RSUBMITFAIL (0x45) is a routing refusal by its command status, whatever the error says', () => {
    expect(isRoutingRefusal({ ...refusal, commandStatus: 0x45 })).toBe(true);
    expect(isRoutingRefusal({ ...refusal, commandStatus: 0x45, error: 'no route for you' })).toBe(true);
  });

  it('an error text that merely reads like 0x45 is not, nor any other final status', () => {
    expect(isRoutingRefusal({ ...refusal, error: 'command_status 0x00000045' })).toBe(false);
    expect(isRoutingRefusal({ ...refusal, commandStatus: 0x0b, error: 'command_status 0x00000045' })).toBe(
      false,
    );
  });

  it('a temporary refusal and a part no route takes are', () => {
    expect(isRoutingRefusal({ ...refusal, retry: true, dlrStatus: 1 })).toBe(true);
    expect(isRoutingRefusal({ ...refusal, dlrStatus: 7, noRoute: true })).toBe(true);
  });
});
