// How a worker process dispatches webhooks, derived from the configuration: its bounds, the guard of its lease
// term, and the dispatcher built from them (the server and the bench both run this one).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { createHttpSender } from './http-sender.ts';
import type { UrlGuard } from './url-guard.ts';
import type { WebhookDeliveriesService } from './webhook-deliveries.service.ts';

type PolicyConfig = Pick<
  Config,
  | 'WEBHOOK_CONCURRENCY'
  | 'WEBHOOK_CONCURRENCY_PER_WEBHOOK'
  | 'WEBHOOK_SLOW_MS'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_CONNECT_TIMEOUT_MS'
  | 'WORKER_POLL_MS'
>;

/**
 * Deliveries of one webhook a worker holds at once: enough queued behind its in-flight requests that one
 * claim refills it with a batch (half of this) rather than a few rows.
 */
export const webhookAhead = (config: PolicyConfig) =>
  Math.min(config.WEBHOOK_CONCURRENCY, config.WEBHOOK_CONCURRENCY_PER_WEBHOOK * 16);

/**
 * How long before the end of its lease term a dispatcher stops starting requests (store/lease-holder.ts): the
 * time a request may take to reach the wire (connecting, at most WEBHOOK_CONNECT_TIMEOUT_MS) plus a second,
 * kept between a third and a half of the lease so that a term renewed on time always leaves room to send.
 */
export const webhookLeaseGuardMs = (config: Pick<Config, 'LEASE_SECONDS' | 'WEBHOOK_CONNECT_TIMEOUT_MS'>) => {
  const leaseMs = config.LEASE_SECONDS * 1000;
  return Math.min(
    Math.floor(leaseMs / 2),
    Math.max(Math.ceil(leaseMs / 3), config.WEBHOOK_CONNECT_TIMEOUT_MS + 1000),
  );
};

export function dispatcherFromConfig(deps: {
  config: PolicyConfig;
  deliveries: WebhookDeliveriesService;
  urlGuard: UrlGuard;
  clock: Clock;
  logger: Logger;
  metrics?: Parameters<typeof createDispatcher>[0]['metrics'];
}): Dispatcher {
  const { config } = deps;
  return createDispatcher({
    deliveries: deps.deliveries,
    sender: createHttpSender({
      guard: deps.urlGuard,
      connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS,
      requestTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
      maxResponseBytes: 64 * 1024,
    }),
    clock: deps.clock,
    log: deps.logger,
    metrics: deps.metrics,
    options: {
      pollMs: config.WORKER_POLL_MS,
      fanOutBatch: 1000,
      maxClaimed: config.WEBHOOK_CONCURRENCY,
      perWebhookInFlight: config.WEBHOOK_CONCURRENCY_PER_WEBHOOK,
      perWebhookAhead: webhookAhead(config),
      slowMs: config.WEBHOOK_SLOW_MS,
      // Gives back a crashed dispatcher's deliveries within a second of its lease term lapsing: the sweep is a
      // read of the leased rows while nothing has lapsed.
      sweepMs: 1000,
      stopGraceMs: 2000,
    },
  });
}
