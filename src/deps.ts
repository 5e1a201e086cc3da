// Composition root: opens the store, applies migrations, and wires repositories into services.
import pino, { type Logger } from 'pino';
import { type AccountsService, createAccountsService } from './accounts/accounts.service.ts';
import { type CampaignsService, createCampaignsService } from './campaigns/campaigns.service.ts';
import { createListsService, type ListsService } from './campaigns/lists.service.ts';
import type { Config } from './config.ts';
import { createDeliveryService, type DeliveryService } from './delivery/delivery.service.ts';
import { createLinksService, type LinksService } from './links/links.service.ts';
import { type Clock, systemClock } from './shared/clock.ts';
import { openStore, type Store } from './store/db.ts';
import { migrate } from './store/migrate.ts';
import { createWebhooksService, type WebhooksService } from './webhooks/webhooks.service.ts';

export interface Services {
  accounts: AccountsService;
  webhooks: WebhooksService;
  links: LinksService;
  campaigns: CampaignsService;
  lists: ListsService;
  delivery: DeliveryService;
}

export interface Deps {
  config: Config;
  clock: Clock;
  logger: Logger;
  store: Store;
  services: Services;
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
  overrides: { clock?: Clock; logger?: Logger; store?: Store } = {},
): Promise<Deps> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config);
  const store =
    overrides.store ??
    (await openStore(config.DATABASE_URL, {
      sqliteSynchronous: config.SQLITE_SYNCHRONOUS,
      pgPoolSize: config.PG_POOL_SIZE,
    }));
  await migrate(store);
  const { db } = store;
  const accounts = createAccountsService({ db, clock });
  const webhooks = createWebhooksService({ db, clock });
  const links = createLinksService({
    db,
    clock,
    logger,
    baseUrl: config.LINK_BASE_URL,
    codeLength: config.SHORT_CODE_LENGTH,
  });
  const campaigns = createCampaignsService({ db, clock, config, accounts, links });
  const lists = createListsService({ db, clock, maxContacts: config.MAX_RECIPIENTS });
  const delivery = createDeliveryService({
    db,
    dialect: store.dialect,
    clock,
    numberLists: {
      addToBlacklist: (tx, accountId, number) => lists.addNumberInTx(tx, accountId, 'blacklist', number),
      addToNpai: (tx, accountId, number) => lists.addNumberInTx(tx, accountId, 'npai', number),
    },
    options: {
      timezone: config.TIMEZONE,
      stopKeywords: config.STOP_KEYWORDS.split(','),
      npaiErrors: config.NPAI_ERROR_CODES.split(',').map((c) => c.trim()),
      leaseMs: config.LEASE_SECONDS * 1000,
    },
  });
  return {
    config,
    clock,
    logger,
    store,
    services: { accounts, webhooks, links, campaigns, lists, delivery },
    close: () => store.destroy(),
  };
}
