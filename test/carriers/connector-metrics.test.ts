// The `connector` label of the SMPP and delivery series carries each connector's name: two SMPP connectors in
// one process give two series of each, counted apart.
import { afterEach, describe, expect, it } from 'vitest';
import { connectorUsage } from '../../src/delivery/connector-status.ts';
import { buildParts } from '../../src/delivery/outbound-parts.ts';
import { SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import { createProcessMetrics } from '../../src/ops/metrics.ts';
import { parseExposition, sampleValue } from '../helpers/prometheus-text.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';

const quiet = { info() {}, warn() {}, error() {} };

describe('metrics of several connectors', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('each SMPP connector has its own binds, window, throttling, reconnects and submits series, under its name', async () => {
    const metrics = createProcessMetrics({ role: 'delivery', idForms: (id) => [id] });
    const alphaSmsc = await new TestSmsc().listen();
    const betaSmsc = await new TestSmsc({ refuse: { status: 0x58, count: 1 } }).listen();
    cleanups.push(
      () => alphaSmsc.close(),
      () => betaSmsc.close(),
    );
    const connector = (name: string, url: string, binds: number) =>
      new SmppTransport(
        {
          name,
          url,
          binds,
          window: 4,
          tps: 0,
          enquireLinkMs: 30_000,
          responseTimeoutMs: 5_000,
          reconnectMinMs: 20,
          reconnectMaxMs: 100,
          backpressureRetries: 2,
        },
        quiet,
        metrics.smpp,
      );
    const alpha = connector('alpha', alphaSmsc.url, 1);
    const beta = connector('beta', betaSmsc.url, 2);
    // As a router over several connectors shows them (its `connectors`, each with its name in `spec`).
    metrics.watchTransport(
      connectorUsage({
        connectors: [
          { spec: { name: 'alpha' }, transport: alpha },
          { spec: { name: 'beta' }, transport: beta },
        ],
      }),
    );
    const handler = { onReceipt: async () => {}, onInbound: async () => {} };
    for (const t of [alpha, beta]) {
      cleanups.push(() => t.stop());
      await t.start(handler);
    }
    await waitFor(() => alpha.usage().bindsUp === 1 && beta.usage().bindsUp === 2, 'every bind up');
    const scrape = async () => parseExposition(await metrics.registry.metrics());
    const value = async (name: string, connectorName: string, labels: Record<string, string> = {}) =>
      sampleValue(await scrape(), name, { connector: connectorName, ...labels });

    expect(await value('pigeon_smpp_binds_up', 'alpha')).toBe(1);
    expect(await value('pigeon_smpp_binds_up', 'beta')).toBe(2);
    expect(await value('pigeon_smpp_window_size', 'alpha')).toBe(4);
    expect(await value('pigeon_smpp_window_size', 'beta')).toBe(8);
    expect(await value('pigeon_smpp_binds_up', 'default')).toBeUndefined();

    const part = buildParts({
      recipient: '33612345678',
      sender: null,
      text: 'x',
      encoding: 'gsm7',
      ref: 1,
    })[0];
    // The router names the connector of each outcome; the worker hands it to the metrics as is.
    const outcome = await beta.submit(part);
    expect(outcome.ok).toBe(true);
    metrics.delivery.submitted({ ...outcome, connector: 'beta' }, 0.01);
    metrics.delivery.receipt({ smscId: 'x', stat: 'DELIVRD', connector: 'beta' });
    expect(await value('pigeon_smpp_throttled_total', 'beta')).toBe(1);
    expect((await value('pigeon_smpp_throttled_total', 'alpha')) ?? 0).toBe(0);
    expect(await value('pigeon_delivery_submits_total', 'beta', { outcome: 'accepted' })).toBe(1);
    expect(await value('pigeon_delivery_submits_total', 'alpha', { outcome: 'accepted' })).toBeUndefined();
    expect(await value('pigeon_delivery_receipts_total', 'beta')).toBe(1);

    alphaSmsc.dropAll();
    await waitFor(
      async () => ((await value('pigeon_smpp_reconnects_total', 'alpha')) ?? 0) >= 1,
      'alpha reconnecting',
    );
    expect((await value('pigeon_smpp_reconnects_total', 'beta')) ?? 0).toBe(0);
  });
});
