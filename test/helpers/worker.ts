// The delivery worker as the tests run it: fast polls and sweeps, retries at once, on the harness's clock.
import { createDeliveryWorker, type WorkerOptions } from '../../src/delivery/delivery-worker.ts';
import { SimulatorTransport } from '../../src/delivery/simulator/simulator-transport.ts';
import type { Transport } from '../../src/delivery/transport.ts';
import type { Harness } from './harness.ts';

const silent = { info() {}, warn() {}, error() {} };

/** A simulator whose every message is delivered, its receipt `dlrDelayMs` after the submit. */
export const deliveringSimulator = (dlrDelayMs = 0) =>
  new SimulatorTransport({ dlrDelayMs, outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }] });

/** A delivery worker on the harness's database and clock (not started); `options` override the test ones. */
export function testDeliveryWorker(
  h: Harness,
  transport: Transport,
  options: Partial<WorkerOptions> = {},
  log: Parameters<typeof createDeliveryWorker>[0]['log'] = silent,
) {
  return createDeliveryWorker({
    delivery: h.deps.services.delivery,
    transport,
    clock: h.clock,
    log,
    options: {
      batchSize: 50,
      pollMs: 10,
      validityMs: 48 * 3_600_000,
      retryBaseMs: 0,
      retryMaxMs: 0,
      sweepMs: 20,
      ...options,
    },
  });
}
