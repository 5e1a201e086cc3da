// The delivery worker as the tests run it: fast polls and sweeps, retries at once, on the harness's clock.
import { afterEach } from 'vitest';
import {
  createDeliveryWorker,
  type DeliveryWorker,
  type WorkerOptions,
} from '../../src/delivery/delivery-worker.ts';
import type { RouterTransport } from '../../src/delivery/routing/router-transport.ts';
import { SimulatorTransport } from '../../src/delivery/simulator/simulator-transport.ts';
import type { Transport } from '../../src/delivery/transport.ts';
import { createTransport } from '../../src/delivery/transports.ts';
import { createDispatcher } from '../../src/webhooks/dispatcher.ts';
import { createHttpSender } from '../../src/webhooks/http-sender.ts';
import type { Harness } from './harness.ts';
import { waitFor } from './wait.ts';

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
    replies: h.deps.services.replies,
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

/**
 * Starts delivering workers (every message delivered) on the suite's harness, each stopped after its test:
 * call it in a suite's body, then the function it answers in a test.
 */
export function deliveringWorkers(h: () => Harness): () => Promise<DeliveryWorker> {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
  });
  return async () => {
    const worker = testDeliveryWorker(h(), deliveringSimulator());
    await worker.start();
    workers.push(worker);
    return worker;
  };
}

/**
 * A delivery worker through the harness's CONNECTORS_FILE routes, started, once every connector is bound;
 * its router transport, to watch or stop connectors.
 */
export async function startRoutedWorker(
  h: Harness,
  log: Parameters<typeof createDeliveryWorker>[0]['log'] = silent,
  options: Partial<WorkerOptions> = {},
): Promise<{ transport: RouterTransport; worker: ReturnType<typeof createDeliveryWorker> }> {
  const transport = createTransport(h.config, log, undefined, h.deps.routing);
  const worker = testDeliveryWorker(h, transport, options);
  await worker.start();
  await waitFor(() => transport.connectors.every((c) => c.transport.ready()), 'every connector bound');
  return { transport, worker };
}

/**
 * A webhook dispatcher on the harness's database and clock (not started): fast polls and sweeps, loopback
 * receivers allowed by the harness's WEBHOOK_ALLOW_PRIVATE.
 */
export function testDispatcher(h: Harness, log: Parameters<typeof createDispatcher>[0]['log'] = silent) {
  return createDispatcher({
    deliveries: h.deps.services.webhookDeliveries,
    sender: createHttpSender({
      guard: h.deps.urlGuard,
      connectTimeoutMs: 2000,
      requestTimeoutMs: 5000,
      maxResponseBytes: 64 * 1024,
    }),
    clock: h.clock,
    log,
    options: {
      pollMs: 10,
      fanOutBatch: 100,
      maxClaimed: 64,
      perWebhookInFlight: 8,
      perWebhookAhead: 16,
      sweepMs: 20,
      stopGraceMs: 1000,
    },
  });
}

/** Resolves once every message of the campaigns (tickets) has its final state: delivered, failed or expired. */
export function untilFinal(h: Harness, tickets: readonly string[]) {
  return waitFor(async () => {
    const rows = await h.deps.store.db
      .selectFrom('messages')
      .select('state')
      .where(
        'campaign_id',
        'in',
        tickets.map((t) => Number(t)),
      )
      .execute();
    return rows.every((m) => ['delivered', 'failed', 'expired'].includes(m.state));
  }, 'final states');
}
