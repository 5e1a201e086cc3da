// Composition root: opens the store, applies migrations, and wires repositories into services.
import pino, { type Logger } from 'pino';
import { type AccountsService, createAccountsService } from './accounts/accounts.service.ts';
import { type BalanceAlertsService, createBalanceAlertsService } from './accounts/balance-alerts.service.ts';
import { type ConsumptionService, createConsumptionService } from './accounts/consumption.service.ts';
import { createInvoicesService, type InvoicesService } from './accounts/invoices.service.ts';
import { type CampaignsService, createCampaignsService } from './campaigns/campaigns.service.ts';
import { createListsService, type ListsService } from './campaigns/lists.service.ts';
import { type Config, durationMs } from './config.ts';
import { createDeliveryService, type DeliveryService } from './delivery/delivery.service.ts';
import { type ClickFold, createClickFold } from './links/click-fold.ts';
import { createLinksService, type LinksService } from './links/links.service.ts';
import { createLookupService, type LookupService } from './lookup/lookup.service.ts';
import { numberingPlanProvider } from './lookup/numbering-plan.ts';
import { createRetentionService, type RetentionService } from './retention/retention.service.ts';
import { type Clock, systemClock } from './shared/clock.ts';
import { createNudges, type Nudges } from './shared/nudges.ts';
import { openStore, type Store } from './store/db.ts';
import { migrate } from './store/migrate.ts';
import { webhookLeaseMs } from './webhooks/dispatch-policy.ts';
import { createUrlGuard, type UrlGuard } from './webhooks/url-guard.ts';
import {
  createWebhookDeliveriesService,
  type WebhookDeliveriesService,
} from './webhooks/webhook-deliveries.service.ts';
import { createWebhooksService, type WebhooksService } from './webhooks/webhooks.service.ts';

export interface Services {
  accounts: AccountsService;
  webhooks: WebhooksService;
  links: LinksService;
  /** Counts stored clicks into their links and CLICKER events; its timer runs beside the link server. */
  clickFold: ClickFold;
  campaigns: CampaignsService;
  lists: ListsService;
  delivery: DeliveryService;
  webhookDeliveries: WebhookDeliveriesService;
  balanceAlerts: BalanceAlertsService;
  lookup: LookupService;
  retention: RetentionService;
  /** GET /metrics/consumption: accounts' credits used, summed by delivery over its sent messages. */
  consumption: ConsumptionService;
  /** Invoices of credits received: the operator's purchases and the transfers from a parent. */
  invoices: InvoicesService;
}

export interface Deps {
  config: Config;
  clock: Clock;
  logger: Logger;
  store: Store;
  services: Services;
  /** Where webhooks may point: checked when one is stored and at every connection. */
  urlGuard: UrlGuard;
  /** Wake-ups between the server's parts, across its processes when a supervisor runs them. */
  nudges: Nudges;
  close(): Promise<void>;
}

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({
    level: config.LOG_LEVEL,
    redact: ['req.headers.authorization', 'headers.authorization', '*.password', '*.token'],
  });
}

export async function createDeps(
  config: Config,
  overrides: { clock?: Clock; logger?: Logger; store?: Store; nudges?: Nudges } = {},
): Promise<Deps> {
  const clock = overrides.clock ?? systemClock;
  const nudges = overrides.nudges ?? createNudges();
  const logger = overrides.logger ?? createLogger(config);
  const store =
    overrides.store ??
    (await openStore(config.DATABASE_URL, {
      sqliteSynchronous: config.SQLITE_SYNCHRONOUS,
      pgPoolSize: config.PG_POOL_SIZE,
    }));
  await migrate(store);
  const { db } = store;
  // A sub-account's lock holds its queued messages through delivery, created below (called only later).
  const accounts = createAccountsService({
    db,
    clock,
    timezone: config.TIMEZONE,
    heldMessages: {
      hold: (tx, accountId) => delivery.holdQueued(tx, accountId),
      release: (tx, accountId) => delivery.releaseHeld(tx, accountId),
      released: () => nudges.send('messages'),
    },
    invoices: {
      transferred: (tx, toAccountId, credits, fromAccountId) =>
        invoices.recordTransfer(tx, toAccountId, credits, fromAccountId),
    },
  });
  // A purchase's credits and its invoice commit together: the invoice is issued inside addCredits.
  const invoices = createInvoicesService({
    db,
    clock,
    timezone: config.TIMEZONE,
    options: {
      vatPercent: config.INVOICE_VAT_PERCENT,
      currency: config.INVOICE_CURRENCY,
      issuer: config.INVOICE_ISSUER,
      prefix: config.INVOICE_PREFIX,
    },
    topUp: { add: (accountId, credits, inTx) => accounts.addCredits(accountId, credits, 'top-up', inTx) },
  });
  const urlGuard = createUrlGuard({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE });
  const webhooks = createWebhooksService({ db, clock, urlGuard, timezone: config.TIMEZONE });
  const webhookDeliveries = createWebhookDeliveriesService({
    db,
    dialect: store.dialect,
    clock,
    options: {
      leaseMs: webhookLeaseMs(config),
      pauseAfterMs: durationMs(config.WEBHOOK_PAUSE_AFTER),
      retryAfterMaxMs: durationMs(config.WEBHOOK_RETRY_AFTER_MAX),
    },
  });
  const links = createLinksService({
    db,
    clock,
    logger,
    baseUrl: config.LINK_BASE_URL,
    codeLength: config.SHORT_CODE_LENGTH,
  });
  const clickFold = createClickFold({ db, dialect: store.dialect, clock, timezone: config.TIMEZONE, links });
  const lists = createListsService({
    db,
    clock,
    maxContacts: config.MAX_RECIPIENTS,
    timezone: config.TIMEZONE,
  });
  // Delivery and campaigns call each other: delivery through its CampaignSettings port, called only once
  // both exist.
  const delivery = createDeliveryService({
    db,
    dialect: store.dialect,
    clock,
    numberLists: {
      addToBlacklist: (tx, accountId, number, campaignId) =>
        lists.addNumberInTx(tx, accountId, 'blacklist', number, campaignId),
      addToNpai: (tx, accountId, number, campaignId) =>
        lists.addNumberInTx(tx, accountId, 'npai', number, campaignId),
    },
    campaigns: { sendingOptions: (ids) => campaigns.sendingOptions(ids) },
    options: {
      timezone: config.TIMEZONE,
      stopKeywords: config.STOP_KEYWORDS.split(','),
      npaiErrors: config.NPAI_ERROR_CODES.split(',').map((c) => c.trim()),
      leaseMs: config.LEASE_SECONDS * 1000,
    },
  });
  const campaigns = createCampaignsService({
    db,
    clock,
    config,
    accounts,
    links,
    delivery,
    queued: () => nudges.send('messages'),
  });
  const balanceAlerts = createBalanceAlertsService({
    db,
    dialect: store.dialect,
    clock,
    alertSms: {
      queue: (tx, accountId, number, text, sender) =>
        campaigns.sendSystemMessage(tx, accountId, number, text, sender),
    },
    options: {
      sender: config.ALERT_SENDER,
      leaseMs: config.LEASE_SECONDS * 1000,
      retryBaseMs: 30_000,
      retryMaxMs: 3_600_000,
      giveUpAfterMs: 86_400_000,
    },
  });
  const lookup = createLookupService({
    db,
    clock,
    provider: numberingPlanProvider,
    costPerNumber: config.LOOKUP_COST,
    ports: {
      charge: async (tx, accountId, cost) =>
        (await accounts.debit(tx, accountId, cost, null, 'lookup')).credits,
      balance: (accountId) => accounts.credits(accountId),
      npaiNumbers: (accountId, numbers) => lists.listedNumbers(accountId, 'npai', numbers),
    },
  });
  const retention = createRetentionService({
    db,
    clock,
    targets: {
      campaign: (accountId, before, limit) => campaigns.purgeCampaigns(accountId, before, limit),
      message: (accountId, before, limit) => delivery.purgeMessages(accountId, before, limit),
      mo: (accountId, before, limit) => delivery.purgeReplies(accountId, before, limit),
      list: (accountId, before, limit) => lists.purgeContacts(accountId, before, limit),
      lookup: (accountId, before, limit) => lookup.purge(accountId, before, limit),
    },
  });
  const consumption = createConsumptionService({
    db,
    clock,
    timezone: config.TIMEZONE,
    sent: {
      sentCredits: (accountIds, period, countries) => delivery.sentCredits(accountIds, period, countries),
    },
  });
  return {
    config,
    clock,
    logger,
    store,
    services: {
      accounts,
      webhooks,
      links,
      clickFold,
      campaigns,
      lists,
      delivery,
      webhookDeliveries,
      balanceAlerts,
      lookup,
      retention,
      consumption,
      invoices,
    },
    urlGuard,
    nudges,
    close: () => store.destroy(),
  };
}
