// The webhook dispatcher as the server runs it, built from the configuration (the bench measures this one).
import { type Deps, webhookAhead } from '../deps.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { createHttpSender } from './http-sender.ts';

export function dispatcherFromConfig(
  deps: Pick<Deps, 'config' | 'services' | 'urlGuard' | 'clock' | 'logger'>,
): Dispatcher {
  const { config } = deps;
  return createDispatcher({
    deliveries: deps.services.webhookDeliveries,
    sender: createHttpSender({
      guard: deps.urlGuard,
      connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS,
      requestTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
      maxResponseBytes: 64 * 1024,
    }),
    clock: deps.clock,
    log: deps.logger,
    options: {
      pollMs: config.WORKER_POLL_MS,
      fanOutBatch: 1000,
      maxClaimed: config.WEBHOOK_CONCURRENCY,
      perWebhookInFlight: config.WEBHOOK_CONCURRENCY_PER_WEBHOOK,
      perWebhookAhead: webhookAhead(config),
      sweepMs: 5000,
      stopGraceMs: 2000,
    },
  });
}
