// Composition root: opens the store, applies migrations, and wires repositories into services.
import pino, { type Logger } from 'pino';
import { createAccountsService } from './accounts/accounts.service.ts';
import { alertJobTiming } from './accounts/alert-worker.ts';
import { createBalanceAlertsService } from './accounts/balance-alerts.service.ts';
import { createCreditsService } from './accounts/credits.service.ts';
import { createInvoicesService } from './accounts/invoices.service.ts';
import { hashPassword, ipAllowed, isIpOrCidr, verifyPassword } from './accounts/secrets.ts';
import { createTokensService } from './accounts/tokens.service.ts';
import { createAuditService } from './audit/audit.service.ts';
import { createCampaignsService } from './campaigns/campaigns.service.ts';
import { createListsService } from './campaigns/lists.service.ts';
import { failedTogetherMessage } from './campaigns/send-batcher.ts';
import { createSendingService } from './campaigns/sending.service.ts';
import { type Config, durationMs } from './config.ts';
import { createConsoleService } from './console/console.service.ts';
import { createConnectorStatusService } from './delivery/connector-status.service.ts';
import { createDeliveryService, type NumberLists } from './delivery/delivery.service.ts';
import { createDeliveryLifecycleService } from './delivery/delivery-lifecycle.service.ts';
import { deliveryLeaseGuardMs } from './delivery/delivery-worker.ts';
import { smscIdForms } from './delivery/receipt.ts';
import { createRepliesService } from './delivery/replies.service.ts';
import { parseKeywords } from './delivery/reply-keywords.ts';
import { loadRoutingTable } from './delivery/routing/connectors-file.ts';
import { findRoute } from './delivery/routing/routes.ts';
import { pruneTasksOf } from './deps-prune.ts';
import { createUserServices } from './deps-users.ts';
import { createIdempotencyService } from './idempotency/idempotency.service.ts';
import { createEraseService } from './lifecycle/erase.service.ts';

import { createLimitsService } from './limits/limits.service.ts';
import { createClickFold } from './links/click-fold.ts';
import { createLinksService } from './links/links.service.ts';
import { createLookupService } from './lookup/lookup.service.ts';
import { numberingPlanProvider } from './lookup/numbering-plan.ts';
import { createModerationService } from './moderation/moderation.service.ts';
import { createOps } from './ops/ops.ts';
import { appliedMigrations } from './ops/readiness.ts';
import { createPricesService } from './prices/prices.service.ts';
import { createCampaignPagesService } from './reads/campaign-pages.service.ts';
import { createCampaignViewsService } from './reads/campaign-views.service.ts';
import { createConsumptionService } from './reads/consumption.service.ts';
import { createHistoryService } from './reads/history.service.ts';
import { createStatisticsService } from './reads/statistics.service.ts';
import { createRetentionService } from './retention/retention.service.ts';
import type { Deps, Services } from './services.ts';
import { type Clock, systemClock } from './shared/clock.ts';
import { createNudges, ipcCarrier, type NudgeCarrier, type Nudges } from './shared/nudges.ts';
import { createSmppMessagesService } from './smpp-server/smpp-messages.service.ts';
import { createSmppUsersService } from './smpp-server/smpp-users.service.ts';
import { type Executor, openStore, type Store } from './store/db.ts';
import { migrate, migrations } from './store/migrate.ts';
import { postgresNudges } from './store/notify.ts';
import { mayGrantScope, rightsOfRole } from './users/permissions.ts';
import { webhookLeaseGuardMs } from './webhooks/dispatch-policy.ts';
import { createUrlGuard } from './webhooks/url-guard.ts';
import { createWebhookDeliveriesService } from './webhooks/webhook-deliveries.service.ts';
import { createWebhooksService } from './webhooks/webhooks.service.ts';

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino(
    {
      level: config.LOG_LEVEL,
      redact: ['req.headers.authorization', 'headers.authorization', '*.password', '*.token'],
    },
    // Written at once, not buffered: pino's buffered stdout flushes at exit in a loop that never ends when
    // the reader of stdout is gone (EPIPE is retried forever), which would hang a process past its shutdown
    // deadline. Log lines are rare on the hot paths (the access log is off by default).
    pino.destination({ dest: 1, sync: true }),
  );
}

export type { Deps, Services };

export async function createDeps(
  config: Config,
  overrides: {
    clock?: Clock;
    logger?: Logger;
    store?: Store;
    nudges?: Nudges;
    /** A supervised process's IPC channel to its supervisor, which passes nudges to its other processes. */
    supervisor?: NodeJS.Process;
    /** Who the audit log names for changes no API caller made: `cli` in the operator's commands. */
    processActor?: 'cli' | 'pigeon';
  } = {},
): Promise<Deps> {
  const clock = overrides.clock ?? systemClock;
  // Read before the store opens: a bad connectors file stops the start naming every error, touching nothing.
  const routing = loadRoutingTable(config);
  const logger = overrides.logger ?? createLogger(config);
  const store =
    overrides.store ??
    (await openStore(config.DATABASE_URL, {
      sqliteSynchronous: config.SQLITE_SYNCHRONOUS,
      pgPoolSize: config.PG_POOL_SIZE,
      pgConnectTimeoutMs: config.PG_CONNECT_TIMEOUT_MS,
      pgQueryTimeoutMs: config.PG_QUERY_TIMEOUT_MS,
    }));
  await migrate(store);
  const { db } = store;
  // On PostgreSQL nudges also travel through the database, to processes started apart on any machine. Under
  // the supervisor the IPC path stays beside it: it reaches this machine's processes without a round trip to
  // the database and while the database is away, and a wake heard twice costs one look that finds nothing.
  const databaseNudges =
    overrides.nudges === undefined && store.dialect === 'postgres' && store.connectionString
      ? postgresNudges({
          connectionString: store.connectionString,
          schema: store.schema ?? 'public',
          log: logger,
        })
      : undefined;
  const carriers: NudgeCarrier[] = [];
  if (overrides.supervisor) carriers.push(ipcCarrier(overrides.supervisor));
  if (databaseNudges) carriers.push(databaseNudges);
  const nudges = overrides.nudges ?? createNudges(carriers);
  // Every room that changes something writes its entry through this (the AuditTrail port), in its transaction.
  // It names actors through tokens and accounts, created below (called only later).
  const audit = createAuditService({
    db,
    clock,
    timezone: config.TIMEZONE,
    labels: {
      token: (ex, tokenId) => tokens.tokenName(ex, tokenId),
      account: (ex, accountId) => accounts.email(ex, accountId),
      user: (ex, userId) => users.email(ex, userId),
    },
    accountsInView: (auth) => accounts.erasureAccounts(auth),
    processActor: overrides.processActor,
  });
  const tokens = createTokensService({
    db,
    clock,
    timezone: config.TIMEZONE,
    scopes: { mayGrant: mayGrantScope },
    audit,
  });
  // A user's services; the console's sessions are created below (called only later): a reset or a removal
  // ends a user's sessions.
  const { users, recovery, mailer } = createUserServices({
    db,
    dialect: store.dialect,
    clock,
    config,
    logger,
    audit,
    accounts: {
      signInAs: (accountId) => tokens.sessionContext(accountId, accountId),
      exists: (accountId) => accountExists(accountId),
    },
    sessions: { endAll: (userId, exceptSessionId) => consoleSessions.endAll(userId, exceptSessionId) },
  });
  // A transfer's invoice is issued by the invoices service, created below (called only later).
  const credits = createCreditsService({
    db,
    clock,
    timezone: config.TIMEZONE,
    invoices: {
      transferred: (tx, toAccountId, amount, fromAccountId) =>
        invoices.recordTransfer(tx, toAccountId, amount, fromAccountId),
    },
    audit,
  });
  /** Whether an account exists: one whose balance can be read. */
  const accountExists = (accountId: number) =>
    credits.credits(accountId).then(
      () => true,
      () => false,
    );
  // A sub-account's lock holds its queued messages through delivery, created below (called only later).
  const accounts = createAccountsService({
    db,
    clock,
    timezone: config.TIMEZONE,
    heldMessages: {
      hold: (tx, accountId) => delivery.holdQueued(tx, accountId),
      // A campaign held for moderation stays held through an unlock: only the operator's decision releases it.
      // What goes back to the queue at once leaves at the account's pace, if it has one.
      release: async (tx, accountId, partsPerSecond) => {
        const released = await delivery.releaseHeld(tx, accountId, await campaigns.heldIds(tx, accountId));
        if (released > 0) await pacing.released(tx, accountId, partsPerSecond);
        return released;
      },
      paceOf: (accountId) => pacing.of(accountId),
      released: () => nudges.send('messages'),
    },
    owners: {
      create: (tx, accountId, email, passwordHash) => users.createOwner(tx, accountId, email, passwordHash),
    },
    tokens,
    credits,
    audit,
  });
  const prices = createPricesService({ db, clock, accounts });
  /**
   * A paced account's messages queued at once (an unlock, an approval) spread over its pace: `of` read before
   * the transaction (a read inside it would wait for it on SQLite), `released` inside it. Limits and delivery
   * are created below (called only later).
   */
  const pacing = {
    of: async (accountId: number) => (await limits.forSend({ accountId })).partsPerSecond,
    async released(tx: Executor, accountId: number, partsPerSecond: number): Promise<void> {
      if (partsPerSecond === 0) return;
      await delivery.paceDue(tx, accountId, partsPerSecond, (parts, now) =>
        limits.pace(tx, accountId, partsPerSecond, parts, now),
      );
    },
  };
  const limits = createLimitsService({
    ...{ db, clock, instance: config, accounts, audit },
    // Operator accounts are the moderation service's, created below (called only later).
    operators: { requireOperator: (auth) => moderation.requireOperator(auth) },
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
    topUp: { add: (accountId, amount, inTx) => credits.addCredits(accountId, amount, 'top-up', inTx) },
  });
  const urlGuard = createUrlGuard({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE });
  const webhooks = createWebhooksService({ db, clock, urlGuard, timezone: config.TIMEZONE, audit });
  const webhookDeliveries = createWebhookDeliveriesService({
    db,
    dialect: store.dialect,
    clock,
    options: {
      leaseMs: config.LEASE_SECONDS * 1000,
      leaseGuardMs: webhookLeaseGuardMs(config),
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
    // PUT /campaign/:ticket/npai blacklists a campaign's NPAI numbers, which delivery reads (called only later).
    campaignNpai: { numbers: (tx, accountId, campaignId) => delivery.npaiNumbers(tx, accountId, campaignId) },
    audit,
  });
  // Delivery and campaigns call each other: delivery through its CampaignSettings port, called only once
  // both exist.
  // Delivery's NumberLists port: a receipt's or refusal's NPAI, and a reply's STOP and START.
  const numberLists: NumberLists = {
    addToBlacklist: (tx, accountId, number, campaignId) =>
      lists.addNumberInTx(tx, accountId, 'blacklist', number, campaignId),
    addToNpai: (tx, accountId, number, campaignId) =>
      lists.addNumberInTx(tx, accountId, 'npai', number, campaignId),
    removeFromBlacklist: (tx, accountId, number) =>
      lists.removeNumberInTx(tx, accountId, 'blacklist', number),
  };
  const delivery = createDeliveryService({
    db,
    dialect: store.dialect,
    clock,
    numberLists,
    campaigns: {
      sendingOptions: (ids) => campaigns.sendingOptions(ids),
      // A message no route took when sent: refunded and counted in not_allowed by its campaign.
      notRouted: (tx, messages) => campaigns.notRouted(tx, messages),
    },
    options: {
      timezone: config.TIMEZONE,
      npaiErrors: config.NPAI_ERROR_CODES.split(',').map((c) => c.trim()),
      leaseMs: config.LEASE_SECONDS * 1000,
      leaseGuardMs: deliveryLeaseGuardMs(config),
      dlrWaitMs: durationMs(config.DLR_WAIT),
    },
    // Receipts of messages an SMPP user sent, queued for that user's binds (created below, called only later).
    eventsWritten: (tx, events, now) => smppMessages.eventsWritten(tx, events, now),
  });
  const replies = createRepliesService({
    db,
    clock,
    numberLists,
    // A HELP's answer is a free message queued as balance alert SMS are (the worker's next poll sends it),
    // by the sending service, created below (called only later).
    answers: {
      queue: (tx, accountId, number, text, sender) =>
        sending.sendSystemMessage(tx, accountId, number, text, sender),
    },
    options: {
      timezone: config.TIMEZONE,
      keywords: {
        stop: parseKeywords(config.STOP_KEYWORDS),
        start: parseKeywords(config.START_KEYWORDS),
        help: parseKeywords(config.HELP_KEYWORDS),
      },
      help: {
        text: config.HELP_TEXT,
        intervalMs: durationMs(config.HELP_ANSWER_INTERVAL),
        fallbackSender: config.ALERT_SENDER,
      },
    },
    // Replies to messages an SMPP user sent, queued for that user's binds.
    eventsWritten: (tx, events, now) => smppMessages.eventsWritten(tx, events, now),
  });
  const deliveryLifecycle = createDeliveryLifecycleService({ db, clock });
  const connectors = createConnectorStatusService({ db });
  // The reads across rooms: they query the tables themselves, read only.
  const campaignViews = createCampaignViewsService({ db, timezone: config.TIMEZONE });
  const campaignPages = createCampaignPagesService({ db, timezone: config.TIMEZONE });
  const history = createHistoryService({ db, clock, timezone: config.TIMEZONE });
  const statistics = createStatisticsService({ db, clock, timezone: config.TIMEZONE });
  const consumption = createConsumptionService({ db, clock, timezone: config.TIMEZONE });
  const idempotency = createIdempotencyService({ db, clock, logger });
  const sending = createSendingService({
    db,
    dialect: store.dialect,
    clock,
    config,
    credits,
    links,
    delivery,
    failedTogether: (error) => logger.error({ err: error }, failedTogetherMessage),
    queued: (messages) => {
      nudges.send('messages');
      ops.metrics?.sends.accepted(messages);
    },
    // Its alert's jobs for the alert worker, and its BALANCE_ALERT event for the webhook dispatcher.
    alerted: () => {
      nudges.send('alerts');
      nudges.send('events');
    },
    idempotency,
    prices,
    limits,
    audit,
    // Without CONNECTORS_FILE the one route takes every message: nothing to ask.
    routable: config.CONNECTORS_FILE
      ? (message) => findRoute(routing.routes, message) !== undefined
      : undefined,
    // The moderation service, created below (called only later).
    screen: (account, message) => moderation.screen(account, message),
    held: () => nudges.send('events'),
  });
  const smppUsers = createSmppUsersService({
    db,
    clock,
    passwords: { hash: hashPassword, verify: verifyPassword, isIpOrCidr, ipAllowed },
    timezone: config.TIMEZONE,
    audit,
    accountExists,
  });
  const smppMessages = createSmppMessagesService({
    db,
    clock,
    sending,
    delivery,
    // The campaigns service, created below (called only later).
    campaigns: { cancel: (auth, ticket) => campaigns.cancel(auth, ticket) },
    options: { timezone: config.TIMEZONE, keepMs: durationMs(config.DLR_WAIT) },
  });
  const campaigns = createCampaignsService({
    db,
    clock,
    config,
    credits,
    links,
    delivery,
    deliveryLifecycle,
    audit,
    decided: (queuedMessages) => {
      if (queuedMessages > 0) nudges.send('messages');
      nudges.send('events');
    },
    locked: async (accountId) => (await accounts.operatorShow(accountId)).state === 'locked',
    pace: pacing,
  });
  const moderation = createModerationService({
    db,
    clock,
    timezone: config.TIMEZONE,
    senderApproval: config.SENDER_APPROVAL === 'required',
    held: {
      list: (afterId, limit) => campaigns.listHeld(afterId, limit),
      approve: (id, by) => campaigns.approveHeld(id, by),
      refuse: (id, reason, by) => campaigns.refuseHeld(id, reason, by),
    },
    audit,
    accountExists,
  });
  const balanceAlerts = createBalanceAlertsService({
    db,
    dialect: store.dialect,
    clock,
    alertSms: {
      queue: (tx, accountId, number, text, sender) =>
        sending.sendSystemMessage(tx, accountId, number, text, sender),
    },
    options: {
      sender: config.ALERT_SENDER,
      ...alertJobTiming,
    },
    audit,
  });
  const lookup = createLookupService({
    db,
    clock,
    provider: numberingPlanProvider,
    costPerNumber: config.LOOKUP_COST,
    audit,
    ports: {
      charge: async (tx, accountId, cost) =>
        (await credits.debit(tx, accountId, cost, null, 'lookup')).credits,
      balance: (accountId) => credits.credits(accountId),
      npaiNumbers: (accountId, numbers) => lists.listedNumbers(accountId, 'npai', numbers),
    },
  });
  const retention = createRetentionService({
    db,
    clock,
    targets: {
      campaign: (accountId, before, limit) => campaigns.purgeCampaigns(accountId, before, limit),
      message: (accountId, before, limit) => deliveryLifecycle.purgeMessages(accountId, before, limit),
      mo: (accountId, before, limit) => deliveryLifecycle.purgeReplies(accountId, before, limit),
      list: (accountId, before, limit) => lists.purgeContacts(accountId, before, limit),
      lookup: (accountId, before, limit) => lookup.purge(accountId, before, limit),
      audit: (accountId, before, limit) => audit.purge(accountId, before, limit),
    },
    audit,
  });
  // Reaches the capabilities through their services only, for the gauges read from the database.
  const ops = createOps({
    config,
    log: logger,
    now: () => clock.now(),
    appliedMigrations: () => appliedMigrations(db),
    knownMigrations: Object.keys(migrations),
    sources: {
      messageStates: (now, finishedSince) => delivery.queueStates(now, finishedSince),
      webhookBacklog: (now) => webhookDeliveries.backlog(now),
      oldestUnfoldedClickAt: async () => (await clickFold.oldestUnfoldedAt()) ?? null,
    },
    pool: () => store.connections(),
    smscIdForms,
  });
  const consoleSessions = createConsoleService({
    db,
    clock,
    accounts: {
      authenticate: (credentials) => users.authenticate(credentials.username, credentials.password),
      completeSignIn: (pendingToken, code) => recovery.completeSignIn(pendingToken, code),
      sessionContext: (signedInId, accountId) => tokens.sessionContext(signedInId, accountId),
      user: (userId) => users.sessionUser(userId),
      account: (auth) => accounts.account(auth),
      // Console sign-ins are users': a failure is the account of the user the e-mail names.
      idByEmail: (email) => users.accountOfEmail(email),
      rights: rightsOfRole,
    },
    audit,
    sessionHours: config.CONSOLE_SESSION_HOURS,
    timeZone: config.TIMEZONE,
    stopMention: config.STOP_MENTION,
    shortUrlLength: links.shortUrlLength,
    log: logger,
  });
  const erase = createEraseService({
    db,
    ports: { accounts, delivery: deliveryLifecycle, links, lists, lookup, webhooks, smpp: smppMessages },
    truncateLog: store.truncateLog,
    audit,
  });
  const pruneTasks = pruneTasksOf(config, {
    webhooks,
    balanceAlerts,
    links,
    deliveryLifecycle,
    idempotency,
    campaigns,
    consoleSessions,
    smppMessages,
  });
  return {
    config,
    routing,
    clock,
    logger,
    store,
    services: {
      audit,
      accounts,
      tokens,
      credits,
      prices,
      limits,
      webhooks,
      links,
      clickFold,
      sending,
      campaigns,
      lists,
      delivery,
      campaignViews,
      campaignPages,
      history,
      replies,
      deliveryLifecycle,
      connectors,
      statistics,
      webhookDeliveries,
      balanceAlerts,
      lookup,
      retention,
      consumption,
      invoices,
      idempotency,
      erase,
      pruneTasks,
      console: consoleSessions,
      smppUsers,
      smppMessages,
      users,
      moderation,
      recovery,
    },
    urlGuard,
    nudges,
    ops,
    async close() {
      mailer?.close();
      await databaseNudges?.close();
      await store.destroy();
    },
  };
}
