// What a process serves, per ROLE: the API and the link server (with the click fold beside it), the
// delivery worker, the webhook dispatcher and the balance alert worker; their start and stop order, and
// the nudges that wake a worker when the API or another worker has just written its work.
import { accountsRoutes } from './accounts/accounts.routes.ts';
import { alertWorkerOptions, createAlertWorker } from './accounts/alert-worker.ts';
import { balanceAlertsRoutes } from './accounts/balance-alerts.routes.ts';
import { creditsRoutes } from './accounts/credits.routes.ts';
import { invoicesRoutes } from './accounts/invoices.routes.ts';
import { createSmtpMailer } from './accounts/mailer.ts';
import { tokensRoutes } from './accounts/tokens.routes.ts';
import { auditRoutes } from './audit/audit.routes.ts';
import { campaignsRoutes } from './campaigns/campaigns.routes.ts';
import { listsRoutes } from './campaigns/lists.routes.ts';
import { durationMs } from './config.ts';
import { consoleRoutes } from './console/console.routes.ts';
import { sessionCookieName } from './console/console.service.ts';
import { loadConsoleAssets } from './console/console-assets.ts';
import { profileSessionsRoutes } from './console/profile-sessions.routes.ts';
import { connectorsOf, connectorUsage, publishConnectorStatus } from './delivery/connector-status.ts';
import { createDeliveryWorker, deliveryWorkerOptions } from './delivery/delivery-worker.ts';
import { createTransport } from './delivery/transports.ts';
import type { Deps } from './deps.ts';
import { buildApp } from './http/app.ts';
import { registerApiDocs } from './http/openapi.ts';
import type { App } from './http/types.ts';
import { eraseRoutes } from './lifecycle/erase.routes.ts';
import { createPruneJob } from './lifecycle/prune-job.ts';
import { limitsRoutes } from './limits/limits.routes.ts';
import { createClickFolder } from './links/click-fold.ts';
import { closeLinkServer, createLinkServer } from './links/link-server.ts';
import { lookupRoutes } from './lookup/lookup.routes.ts';
import { moderationRoutes } from './moderation/moderation.routes.ts';
import { pricesRoutes } from './prices/prices.routes.ts';
import { consumptionRoutes } from './reads/consumption.routes.ts';
import { readsRoutes } from './reads/reads.routes.ts';
import { statisticsRoutes } from './reads/statistics.routes.ts';
import { retentionRoutes } from './retention/retention.routes.ts';
import { createRetentionJob } from './retention/retention-job.ts';
import { smppServerFromConfig } from './smpp-server/smpp-server-config.ts';
import { smppUsersRoutes } from './smpp-server/smpp-users.routes.ts';
import { createFirstStatistics } from './store/first-statistics.ts';
import { authorize } from './users/permissions.ts';
import { forgotRoutes, profileRoutes } from './users/profile.routes.ts';
import { userLinkRoutes, usersRoutes } from './users/users.routes.ts';
import { dispatcherFromConfig } from './webhooks/dispatch-policy.ts';
import { webhooksRoutes } from './webhooks/webhooks.routes.ts';

export interface Running {
  apiUrl: string | undefined;
  linkUrl: string | undefined;
  /** Where /health, /ready and /metrics are served when METRICS_PORT gives them a port of their own. */
  metricsUrl: string | undefined;
  /** Runs the stop steps in order, each finishing what it has in flight. */
  stop(): Promise<void>;
  /** The stop steps not finished yet, in order: while stop() runs, the first is the one underway. */
  unfinished(): string[];
}

/** One step of a process's stop, named so a stop that overruns SHUTDOWN_TIMEOUT can say what was running. */
interface StopStep {
  name: string;
  stop: () => Promise<void>;
}

/** The API's Fastify app with every capability's routes (not listening: tests use inject). */
export function buildApi(
  deps: Pick<Deps, 'config' | 'logger' | 'services'> & Partial<Pick<Deps, 'clock' | 'ops'>>,
): App {
  const { ops } = deps;
  const { services } = deps;
  return buildApp({
    config: deps.config,
    clock: deps.clock,
    logger: deps.logger,
    authenticate: (credential, clientIp) => services.tokens.authenticate(credential, clientIp),
    accountRps: (auth) => services.limits.requestsPerSecond(auth),
    documentation: registerApiDocs,
    operations: ops ? (app) => ops.register(app) : undefined,
    sessions: {
      cookieName: sessionCookieName,
      authenticate: (cookie, method, csrf) => services.console.authenticate(cookie, method, csrf),
    },
    console: (app) => consoleRoutes(app, services.console, loadConsoleAssets()),
    routes: [
      (api) => accountsRoutes(api, services.accounts),
      (api) => tokensRoutes(api, services.tokens),
      (api) => creditsRoutes(api, services.credits),
      (api) => pricesRoutes(api, services.prices),
      (api) => limitsRoutes(api, services.limits),
      (api) => balanceAlertsRoutes(api, services.balanceAlerts),
      (api) => invoicesRoutes(api, services.invoices),
      (api) => webhooksRoutes(api, services.webhooks),
      (api) => campaignsRoutes(api, services),
      (api) => readsRoutes(api, services),
      (api) => listsRoutes(api, services.lists),
      (api) => lookupRoutes(api, services.lookup),
      (api) => retentionRoutes(api, services.retention),
      (api) => consumptionRoutes(api, services.consumption),
      (api) => eraseRoutes(api, services.erase),
      (api) => statisticsRoutes(api, services.statistics),
      (api) => smppUsersRoutes(api, services.smppUsers),
      (api) => usersRoutes(api, services.users),
      (api) => auditRoutes(api, services.audit),
      (api) => moderationRoutes(api, services.moderation),
      (api) => profileRoutes(api, services.recovery),
      (api) => profileSessionsRoutes(api, services.console),
    ],
    publicRoutes: [
      (app) => userLinkRoutes(app, services.users),
      (app) => forgotRoutes(app, services.recovery),
    ],
    // Each route's permission against the caller's role or token scope (src/users/permissions.ts).
    authorize,
  });
}

export async function startRuntime(deps: Deps): Promise<Running> {
  const { config, logger } = deps;
  const stops: StopStep[] = [];
  let apiUrl: string | undefined;
  let linkUrl: string | undefined;
  let metricsUrl: string | undefined;
  const role = config.ROLE;
  deps.ops.startProcessMetrics();
  const serves = {
    api: role === 'all' || role === 'api',
    delivery: role === 'all' || role === 'worker' || role === 'delivery',
    webhooks: role === 'all' || role === 'worker' || role === 'webhooks',
  };
  if (serves.api) {
    const app = buildApi(deps);
    apiUrl = await app.listen({ host: config.HOST, port: config.PORT });
    logger.info({ url: apiUrl }, 'API listening');
    stops.push({ name: 'API server', stop: () => app.close() });
    const linkServer = createLinkServer(deps);
    await new Promise<void>((resolve, reject) => {
      linkServer.once('error', reject);
      linkServer.listen(config.LINK_PORT, config.LINK_HOST, () => {
        linkServer.off('error', reject);
        resolve();
      });
    });
    const address = linkServer.address();
    const port = typeof address === 'object' && address ? address.port : config.LINK_PORT;
    linkUrl = `http://${config.LINK_HOST.includes(':') ? `[${config.LINK_HOST}]` : config.LINK_HOST}:${port}`;
    logger.info({ url: linkUrl, baseUrl: config.LINK_BASE_URL }, 'link server listening');
    stops.push({ name: 'link server', stop: () => closeLinkServer(linkServer, deps.services.links) });
    // Beside the link server whose clicks it folds; stopped after it, so its last clicks are folded too.
    const folder = createClickFolder({
      fold: deps.services.clickFold,
      links: deps.services.links,
      log: logger,
      folded: () => deps.nudges.send('events'),
    });
    folder.start();
    stops.push({ name: 'click fold', stop: () => folder.stop() });
    // Beside the API: customers' SMPP clients send through their account as its HTTP clients do.
    const smppServer = await smppServerFromConfig(deps);
    if (smppServer) {
      deps.nudges.on('events', () => smppServer.wake());
      stops.unshift({ name: 'SMPP server', stop: () => smppServer.close() });
    }
  }
  if (serves.delivery) {
    const transport = createTransport(config, logger, deps.ops.metrics?.smpp, deps.routing);
    // Part of this process's readiness: a delivery process is ready once its transport can submit; the
    // metrics show each SMPP connector under its name.
    deps.ops.watchTransport(transport, connectorUsage(transport));
    const worker = createDeliveryWorker({
      delivery: deps.services.delivery,
      replies: deps.services.replies,
      transport,
      metrics: deps.ops.metrics?.delivery,
      clock: deps.clock,
      log: logger,
      options: deliveryWorkerOptions(config),
      recorded: () => deps.nudges.send('events'),
    });
    await worker.start();
    deps.nudges.on('messages', () => worker.wake());
    logger.info({ transport: config.TRANSPORT }, 'delivery worker started');
    // For `pigeon connectors`, which runs in another process: each connector's binds, window and last error.
    const connectorStatus = publishConnectorStatus(connectorsOf(transport), {
      sink: deps.services.connectors,
      now: () => deps.clock.now(),
      role,
      log: logger,
    });
    // On a new PostgreSQL database: each queue's first statistics as soon as it fills, not a minute later.
    const firstStatistics = createFirstStatistics({
      db: deps.store.db,
      dialect: deps.store.dialect,
      log: logger,
    });
    firstStatistics.start();
    stops.push({ name: 'first statistics', stop: () => firstStatistics.stop() });
    // Stopped first: in-flight submits finish and are recorded before the servers close.
    stops.unshift({
      name: 'delivery worker',
      stop: async () => {
        await worker.stop();
        await connectorStatus.stop();
      },
    });
  }
  if (serves.webhooks) {
    const dispatcher = dispatcherFromConfig({
      config,
      deliveries: deps.services.webhookDeliveries,
      urlGuard: deps.urlGuard,
      clock: deps.clock,
      logger,
      metrics: deps.ops.metrics?.webhooks,
    });
    dispatcher.start();
    deps.nudges.on('events', () => dispatcher.wake());
    logger.info({}, 'webhook dispatcher started');
    // Stopped after the delivery worker (when this process runs it), whose last receipts may write events.
    stops.splice(serves.delivery ? 1 : 0, 0, { name: 'webhook dispatcher', stop: () => dispatcher.stop() });

    const alertWorker = createAlertWorker({
      alerts: deps.services.balanceAlerts,
      mailer: config.SMTP_URL
        ? createSmtpMailer({ url: config.SMTP_URL, from: config.SMTP_FROM })
        : undefined,
      log: logger,
      options: alertWorkerOptions(config),
      metrics: deps.ops.metrics?.alerts,
      queued: () => deps.nudges.send('messages'),
    });
    alertWorker.start();
    deps.nudges.on('alerts', () => alertWorker.wake());
    if (!config.SMTP_URL)
      logger.warn({}, 'SMTP_URL is not set: balance alert e-mails will be recorded as failed');
    logger.info({}, 'balance alert worker started');
    // Its SMS are written to the database for the delivery worker, so it can stop first.
    stops.unshift({ name: 'balance alert worker', stop: () => alertWorker.stop() });

    // Beside the other housekeeping of this role: deletes what each account's retention settings let go.
    const retentionJob = createRetentionJob({
      retention: deps.services.retention,
      everyMs: durationMs(config.RETENTION_EVERY),
      log: logger,
    });
    retentionJob.start();
    stops.unshift({ name: 'retention job', stop: () => retentionJob.stop() });

    // Beside it: deletes, in bounded batches, what only Pigeon reads once it is older than PRUNE_*_AFTER.
    const pruneJob = createPruneJob({
      tasks: deps.services.pruneTasks,
      clock: deps.clock,
      batchRows: config.PRUNE_BATCH_ROWS,
      pauseMs: config.PRUNE_PAUSE_MS,
      everyMs: durationMs(config.PRUNE_EVERY),
      log: logger,
    });
    pruneJob.start();
    stops.unshift({ name: 'prune job', stop: () => pruneJob.stop() });
  }
  if (config.METRICS_PORT !== undefined) {
    // Instead of the API's port; a worker process has no other way to show them.
    const server = await deps.ops.listen(config.METRICS_HOST ?? config.HOST, config.METRICS_PORT);
    metricsUrl = server.url;
    logger.info({ url: metricsUrl }, 'health and metrics listening');
    stops.push({ name: 'metrics server', stop: () => server.close() });
  }
  return {
    apiUrl,
    linkUrl,
    metricsUrl,
    async stop() {
      while (stops.length > 0) {
        await stops[0].stop();
        stops.shift();
      }
    },
    unfinished: () => stops.map((step) => step.name),
  };
}
