// How a worker process dispatches webhooks, derived from the configuration: its bounds, the lease of a held
// delivery, and the dispatcher built from them (the server and the bench both run this one).
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
 * A webhook delivery's lease outlasts the longest it can be held: waiting behind the webhook's other held
 * deliveries, each taking at most the request timeout, then its own request; plus a minute's margin.
 */
export const webhookLeaseMs = (config: PolicyConfig) =>
  (Math.ceil(webhookAhead(config) / config.WEBHOOK_CONCURRENCY_PER_WEBHOOK) + 1) * config.WEBHOOK_TIMEOUT_MS +
  60_000;

export function dispatcherFromConfig(deps: {
  config: PolicyConfig;
  deliveries: WebhookDeliveriesService;
  urlGuard: UrlGuard;
  clock: Clock;
  logger: Logger;
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
