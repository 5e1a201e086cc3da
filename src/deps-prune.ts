// What the pruning job deletes (src/lifecycle/prune-job.ts), composed beside deps.ts: one task per kind of row
// only Pigeon reads, each through the service of the capability owning it, with its PRUNE_*_AFTER age.
import type { BalanceAlertsService } from './accounts/balance-alerts.service.ts';
import type { CampaignsService } from './campaigns/campaigns.service.ts';
import type { Config } from './config.ts';
import type { ConsoleService } from './console/console.service.ts';
import type { DeliveryLifecycleService } from './delivery/delivery-lifecycle.service.ts';
import type { IdempotencyService } from './idempotency/idempotency.service.ts';
import { type PruneTask, pruneTask } from './lifecycle/prune-job.ts';
import type { LinksService } from './links/links.service.ts';
import type { SmppMessagesService } from './smpp-server/smpp-messages.service.ts';
import type { WebhooksService } from './webhooks/webhooks.service.ts';

export function pruneTasksOf(
  config: Config,
  s: {
    webhooks: WebhooksService;
    balanceAlerts: BalanceAlertsService;
    links: LinksService;
    deliveryLifecycle: DeliveryLifecycleService;
    idempotency: IdempotencyService;
    campaigns: CampaignsService;
    consoleSessions: ConsoleService;
    smppMessages: SmppMessagesService;
  },
): PruneTask[] {
  const {
    webhooks,
    balanceAlerts,
    links,
    deliveryLifecycle,
    idempotency,
    campaigns,
    consoleSessions,
    smppMessages,
  } = s;
  return [
    pruneTask('webhook_attempts', config.PRUNE_WEBHOOK_ATTEMPTS_AFTER, webhooks.pruneAttempts),
    pruneTask('webhook_deliveries', config.PRUNE_WEBHOOK_DELIVERIES_AFTER, webhooks.pruneFinishedDeliveries),
    pruneTask('events', config.PRUNE_EVENTS_AFTER, webhooks.pruneDeliveredEvents),
    pruneTask('alert_jobs', config.PRUNE_ALERT_JOBS_AFTER, balanceAlerts.pruneFinishedJobs),
    pruneTask('clicks', config.PRUNE_CLICKS_AFTER, links.pruneFoldedClicks),
    pruneTask('orphan_receipts', config.PRUNE_ORPHAN_RECEIPTS_AFTER, deliveryLifecycle.pruneOrphanReceipts),
    // Their own age is a rule of their capability (a key answers for 24 h; a day's count serves that day).
    { name: 'idempotency_keys', keepMs: 0, prune: (now, limit) => idempotency.pruneExpired(now, limit) },
    {
      name: 'daily_message_counts',
      keepMs: 0,
      prune: (now, limit) => campaigns.pruneDailyCounts(now, limit),
    },
    { name: 'console_sessions', keepMs: 0, prune: (now, limit) => consoleSessions.pruneExpired(now, limit) },
    // Receipts nobody bound to take before DLR_WAIT, and the marks of SMPP campaigns past PRUNE_EVENTS_AFTER.
    { name: 'smpp_outbox', keepMs: 0, prune: (_before, limit) => smppMessages.pruneOutbox(limit) },
    pruneTask('smpp_submits', config.PRUNE_EVENTS_AFTER, smppMessages.pruneSubmits),
    pruneTask('smpp_parts', config.PRUNE_EVENTS_AFTER, smppMessages.pruneParts),
  ];
}
