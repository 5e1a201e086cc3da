// What the composition root (deps.ts) builds: every capability's service, and what the server's parts share.
import type { Logger } from 'pino';
import type { AccountsService } from './accounts/accounts.service.ts';
import type { BalanceAlertsService } from './accounts/balance-alerts.service.ts';
import type { CreditsService } from './accounts/credits.service.ts';
import type { InvoicesService } from './accounts/invoices.service.ts';
import type { TokensService } from './accounts/tokens.service.ts';
import type { AuditService } from './audit/audit.service.ts';
import type { CampaignsService } from './campaigns/campaigns.service.ts';
import type { ListsService } from './campaigns/lists.service.ts';
import type { SendingService } from './campaigns/sending.service.ts';
import type { Config } from './config.ts';
import type { ConsoleService } from './console/console.service.ts';
import type { ConnectorStatusService } from './delivery/connector-status.service.ts';
import type { DeliveryService } from './delivery/delivery.service.ts';
import type { DeliveryLifecycleService } from './delivery/delivery-lifecycle.service.ts';
import type { RepliesService } from './delivery/replies.service.ts';
import type { RoutingTable } from './delivery/routing/connectors-file.ts';
import type { IdempotencyService } from './idempotency/idempotency.service.ts';
import type { EraseService } from './lifecycle/erase.service.ts';
import type { PruneTask } from './lifecycle/prune-job.ts';
import type { LimitsService } from './limits/limits.service.ts';
import type { ClickFold } from './links/click-fold.ts';
import type { LinksService } from './links/links.service.ts';
import type { LookupService } from './lookup/lookup.service.ts';
import type { ModerationService } from './moderation/moderation.service.ts';
import type { Ops } from './ops/ops.ts';
import type { PricesService } from './prices/prices.service.ts';
import type { CampaignPagesService } from './reads/campaign-pages.service.ts';
import type { CampaignViewsService } from './reads/campaign-views.service.ts';
import type { ConsumptionService } from './reads/consumption.service.ts';
import type { HistoryService } from './reads/history.service.ts';
import type { StatisticsService } from './reads/statistics.service.ts';
import type { RetentionService } from './retention/retention.service.ts';
import type { Clock } from './shared/clock.ts';
import type { Nudges } from './shared/nudges.ts';
import type { SmppMessagesService } from './smpp-server/smpp-messages.service.ts';
import type { SmppUsersService } from './smpp-server/smpp-users.service.ts';
import type { Store } from './store/db.ts';
import type { RecoveryService } from './users/recovery.service.ts';
import type { UsersService } from './users/users.service.ts';
import type { UrlGuard } from './webhooks/url-guard.ts';
import type { WebhookDeliveriesService } from './webhooks/webhook-deliveries.service.ts';
import type { WebhooksService } from './webhooks/webhooks.service.ts';

export interface Services {
  /** The audit log: entries written in the changes' transactions (the AuditTrail port), GET /audit, retention. */
  audit: AuditService;
  /** Accounts and sub-accounts: creation, profile reads, lock and unlock. */
  accounts: AccountsService;
  /** Authentication (tokens, legacy credentials, a console session's caller) and the tokens' CRUD. */
  tokens: TokensService;
  /** Balances and their ledger: debits, refunds, transfers, top-ups, and the balance-alert trigger. */
  credits: CreditsService;
  /** Prices per destination: the operator's price lists, a send's price table, an account's own read. */
  prices: PricesService;
  /** Per-account limits: quotas, rates, pace and countries of each account over the instance's defaults. */
  limits: LimitsService;
  webhooks: WebhooksService;
  links: LinksService;
  /** Counts stored clicks into their links and CLICKER events; its timer runs beside the link server. */
  clickFold: ClickFold;
  /** Sends (`/send`, `/send/lists`, their simulations) and the free system messages (alert SMS, HELP answers). */
  sending: SendingService;
  /** A campaign after its send: cancelling it, retention's purge, daily counts' pruning, delivery's questions. */
  campaigns: CampaignsService;
  lists: ListsService;
  delivery: DeliveryService;
  /** Replies from handsets: their parts, keywords (STOP, START, HELP), rows and MO/STOP events. */
  replies: RepliesService;
  /** Delivery's retention purges, orphan receipts' pruning and a number's erasure from its tables. */
  deliveryLifecycle: DeliveryLifecycleService;
  /** `connector_status`: what each delivery process publishes of its connectors, for `pigeon connectors`. */
  connectors: ConnectorStatusService;
  /** GET /campaign/:ticket and GET /campaigns with their counters (src/reads: owns no table, writes none). */
  campaignViews: CampaignViewsService;
  /** A campaign's messages, clicks, replies, STOPs and NPAI numbers (src/reads). */
  campaignPages: CampaignPagesService;
  /** GET /messages and GET /messages/mo: the account's message and reply history over a period (src/reads). */
  history: HistoryService;
  /** GET /statistics/daily: the account's messages per day of TIMEZONE (src/reads). */
  statistics: StatisticsService;
  webhookDeliveries: WebhookDeliveriesService;
  balanceAlerts: BalanceAlertsService;
  lookup: LookupService;
  retention: RetentionService;
  /** GET /metrics/consumption: accounts' credits used, summed over their sent messages (src/reads). */
  consumption: ConsumptionService;
  /** Invoices of credits received: the operator's purchases and the transfers from a parent. */
  invoices: InvoicesService;
  /** `pigeon erase` and POST /erase: a phone number out of every capability's tables, in one transaction. */
  erase: EraseService;
  /** What the pruning job deletes, one task per kind, each through the service of the capability owning it. */
  pruneTasks: PruneTask[];
  /** Idempotency-Key on sends: claims, first answers, and `pruneExpired(now)` for the housekeeping job. */
  idempotency: IdempotencyService;
  /** The web console's sessions: sign-in, the cookie's caller, CSRF, a parent's switch into a sub-account. */
  console: ConsoleService;
  /** SMPP credentials of accounts: the SMPP server's binds sign in with them (src/smpp-server). */
  smppUsers: SmppUsersService;
  /** The people of an account: their console sign-in, roles, invitations and one-time links (src/users). */
  users: UsersService;
  /** A user's password change and reset, two-factor and its sign-in step (src/users/recovery.service.ts). */
  recovery: RecoveryService;
  /** SMPP users' submits as sends, and their receipts and replies queued for their binds (src/smpp-server). */
  smppMessages: SmppMessagesService;
  /** Sender IDs, content rules, the moderation queue and operator accounts (src/moderation). */
  moderation: ModerationService;
}

export interface Deps {
  config: Config;
  clock: Clock;
  logger: Logger;
  store: Store;
  services: Services;
  /** Where webhooks may point: checked when one is stored and at every connection. */
  urlGuard: UrlGuard;
  /**
   * Wake-ups between the server's parts: across the processes a supervisor runs (IPC), and on PostgreSQL across
   * every process on the same schema, on any machine (LISTEN/NOTIFY).
   */
  nudges: Nudges;
  /** Health, readiness and metrics: their endpoints, and the observers handed to the workers. */
  ops: Ops;
  /** The connectors and routes (CONNECTORS_FILE, or the one connector of SMPP_* / SIM_*), read once. */
  routing: RoutingTable;
  close(): Promise<void>;
}
