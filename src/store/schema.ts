// Row types of every table, as Kysely sees them (those of migrations 022 to 037 in schema-business.ts). Times
// are milliseconds since the epoch.
import type { Generated } from 'kysely';
import type {
  AccountLimitsTable,
  AccountPacingTable,
  AuditLogTable,
  ConnectorStatusTable,
  ConsoleSessionsTable,
  ContentRulesTable,
  MonthlyMessageCountsTable,
  OperatorAccountsTable,
  PricesTable,
  SenderIdsTable,
  SmppBindsTable,
  SmppOutboxTable,
  SmppPartsTable,
  SmppSubmitsTable,
  SmppUsersTable,
  UserRecoveryCodesTable,
  UsersTable,
} from './schema-business.ts';

export type * from './schema-business.ts';

export interface AccountsTable {
  id: Generated<number>;
  parent_id: number | null;
  email: string;
  password_hash: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  credits: number;
  /** 1: the account draws on its parent's credits. */
  unlimited: number;
  created_at: number;
  /** company, association, administration or private; the profile fields are null while unset. */
  type: string | null;
  phone: string | null;
  address1: string | null;
  address2: string | null;
  zip: string | null;
  city: string | null;
  /** ISO 3166-1 alpha-2, upper case. */
  country_code: string | null;
  /** The account's default sender (SMSFactor's `senderid`). */
  sender: string | null;
  description: string | null;
  /**
   * 0 open; 1 while its parent has locked the sub-account, 2 while the operator has locked the account (`pigeon
   * account lock`): its tokens, credentials and console answer -1, its queue is held.
   */
  locked: Generated<number>;
  /** Null: prepaid (the balance never below zero); else postpaid, the balance down to minus this (migration 034). */
  credit_limit: number | null;
}

export interface CreditLedgerTable {
  id: Generated<number>;
  account_id: number;
  delta: number;
  balance_after: number;
  reason: string;
  campaign_id: number | null;
  created_at: number;
}

export interface TokensTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  token_hash: string;
  expires_at: number | null;
  /** JSON array of IPs or CIDRs, or null for any address. */
  allowed_ips: string | null;
  created_at: number;
  last_used_at: number | null;
  /** What the token may do (src/users/permissions.ts): full (the default), send or read. */
  scope: Generated<string>;
}

export interface BalanceNotificationsTable {
  account_id: number;
  alert_trigger: string;
  alert_email: string;
  alert_gsm: string;
  email: string;
  phone_number: string;
  updated_at: number;
  /** 1 while the next debit to or below the trigger alerts; 0 from that alert until the credits rise above it. */
  armed: Generated<number>;
}

export interface AlertJobsTable {
  id: Generated<number>;
  account_id: number;
  /** email or sms. */
  kind: string;
  recipient: string;
  /** The alert's balance, trigger and date, as JSON. */
  payload: string;
  /** pending, sending, sent or failed. */
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhooksTable {
  id: Generated<number>;
  account_id: number;
  type: string;
  url: string;
  signature: string | null;
  secret: string;
  /** The body's format: `json` (the default) or `form` (application/x-www-form-urlencoded). */
  format: Generated<string>;
  status: string;
  last_http_code: number | null;
  /** When the failures since the last success began; null while it succeeds. */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
}

export interface ListsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  created_at: number;
}

export interface ContactsTable {
  id: Generated<number>;
  list_id: number;
  account_id: number;
  number: string;
  info1: string | null;
  info2: string | null;
  info3: string | null;
  info4: string | null;
  created_at: number;
}

export interface NumberListTable {
  id: Generated<number>;
  account_id: number;
  number: string;
  created_at: number;
  /** The contact fields given with the number (POST /blacklist, /npai); null when none were. */
  info1: string | null;
  info2: string | null;
  info3: string | null;
  info4: string | null;
  /** The campaign a STOP reply answered; null for a number added otherwise. */
  campaign_id: number | null;
}

export interface CampaignsTable {
  id: Generated<number>;
  account_id: number;
  /** The account whose credits paid: the parent for an unlimited sub-account. */
  billed_account_id: number;
  sender: string | null;
  text: string;
  pushtype: string;
  unicode: number;
  cost: number;
  total: number;
  sent: number;
  blacklisted: number;
  duplicated: number;
  invalid: number;
  npai: number;
  not_allowed: number;
  status: string;
  due_at: number;
  created_at: number;
  /**
   * 1 for a message the service queued itself (a balance-alert SMS, a HELP answer): the operator's, kept out
   * of the customer's campaign reads. 0 for the customer's campaigns.
   */
  system: Generated<number>;
  /** A campaign held for moderation: the rule that held it; a refused one: the operator's reason too. */
  moderation_note: string | null;
}

/** The lists a campaign sent to (POST /send/lists), one row per list, written in the send's transaction. */
export interface CampaignListsTable {
  campaign_id: number;
  list_id: number;
  account_id: number;
}

export interface MessagesTable {
  id: Generated<number>;
  campaign_id: number;
  /** Position of the recipient in the campaign, 0-based: links point at (campaign_id, seq). */
  seq: number;
  account_id: number;
  recipient: string;
  gsmsmsid: string | null;
  contact_id: number | null;
  text: string;
  parts: number;
  encoding: string;
  state: string;
  due_at: number;
  lease_until: number | null;
  smsc_id: string | null;
  dlr_status: number | null;
  updated_at: number;
  attempts: Generated<number>;
  error: string | null;
  /** When the SMSC accepted every part (the submit's record); null until then, and for a message never sent. */
  sent_at: number | null;
  /** The recipient's ISO 3166-1 alpha-2 country, written with `sent_at`; null when the numbering plan has none. */
  country: string | null;
  /** The `lease_holders` term that leased it while `sending` (migration 020); null otherwise. */
  lease_owner: number | null;
  /** The connector (CONNECTORS_FILE name, `default` without one) that accepted it, with `sent_at` (migration 021). */
  connector: string | null;
  /** The route of CONNECTORS_FILE that chose the connector, with `sent_at`; null for a message never sent. */
  route: string | null;
  /** What the message was charged (parts × its destination's price, migration 034); null before: its parts. */
  credits: number | null;
}

export interface MessagePartsTable {
  id: Generated<number>;
  message_id: number;
  part_no: number;
  smsc_id: string;
  stat: string | null;
  dlr_status: number | null;
  updated_at: number;
}

export interface OrphanReceiptsTable {
  id: Generated<number>;
  smsc_id: string;
  stat: string;
  err: string | null;
  received_at: number;
}

export interface MoFragmentsTable {
  id: Generated<number>;
  sender: string;
  recipient: string;
  ref: number;
  total: number;
  seq: number;
  text: string;
  received_at: number;
  /** The connector the part came in on (migration 023); null before it, or from a transport naming none. */
  connector: string | null;
}

/** When a HELP from a number was last answered for an account: one answer per HELP_ANSWER_INTERVAL. */
export interface HelpAnswersTable {
  account_id: number;
  number: string;
  answered_at: number;
}

/** A reply (MO) or stop request (STOP) from a handset, as the campaign's reads need it. */
export interface RepliesTable {
  id: Generated<number>;
  /** The account and campaign that last wrote to the number. */
  account_id: number;
  campaign_id: number;
  /** MO or STOP. */
  type: string;
  /** Who replied. */
  number: string;
  text: string;
  /** The gsmsmsid of the last message sent to the number, if it had one. */
  gsmsmsid: string | null;
  received_at: number;
}

export interface EventsTable {
  id: Generated<number>;
  account_id: number;
  type: string;
  /** The webhook body, as JSON. */
  payload: string;
  /** The campaign a receipt or reply is about, when there is one. */
  campaign_id: number | null;
  created_at: number;
  /** 1 once the event's webhook deliveries are written. */
  fanned_out: Generated<number>;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  account_id: number;
  /** Null for a test delivery. */
  event_id: number | null;
  event_type: string;
  /** The body of a test delivery; an event's body is read from the event. */
  payload: string | null;
  /** pending, sending, delivered, failed or held. */
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  /** The `lease_holders` term that leased it while `sending` (migration 020); null otherwise. */
  lease_owner: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  webhook_id: number;
  delivery_id: number;
  event_id: number | null;
  event_type: string;
  attempt: number;
  http_code: number | null;
  error: string | null;
  latency_ms: number;
  attempted_at: number;
  next_attempt_at: number | null;
  /** The request's headers as a JSON object; null on attempts logged before migration 025. */
  request_headers: string | null;
  request_body: string | null;
  /** The first bytes of the answer's body; null when no answer came. */
  response_body: string | null;
}

export interface LinksTable {
  id: Generated<number>;
  code: string;
  campaign_id: number;
  message_seq: number;
  account_id: number;
  long_url: string;
  clicks: number;
  created_at: number;
  /** 1: clicks raise CLICKER events, telling the fields below; 0 for a link stored without a message. */
  clicker: Generated<number>;
  /** The recipient's gsmsmsid and list contact fields, as the campaign had them when it stored the link. */
  gsmsmsid: string | null;
  info1: string | null;
  info2: string | null;
  info3: string | null;
  info4: string | null;
}

export interface ClicksTable {
  id: Generated<number>;
  link_id: number;
  campaign_id: number;
  account_id: number;
  message_seq: number;
  clicked_at: number;
  user_agent: string | null;
  referer: string | null;
  ip: string | null;
}

/** Where a consumer of an append-only table has got to: the last id it has handled. */
export interface CursorsTable {
  name: string;
  position: number;
}

/** How long each kind of data is kept: "30d", "6m", or "-1" to keep it. */
export interface RetentionTable {
  account_id: number;
  message: string;
  list: string;
  campaign: string;
  mo: string;
  lookup: string;
  /** SMSFactor's survey setting: stored and shown; Pigeon keeps no surveys to delete. */
  survey: string;
  updated_at: number;
}

export interface LookupsTable {
  id: Generated<number>;
  account_id: number;
  number: string;
  /** VALID, INVALID or NPAI: the answer's status name. */
  status: string;
  provider: string;
  /** The answer as JSON, in SMSFactor's shape. */
  result: string;
  created_at: number;
}

/** An invoice of credits received (accounts); amounts in cents, frozen when it is issued. */
export interface InvoicesTable {
  id: Generated<number>;
  account_id: number;
  /** The invoice number: PG-2026-000042. */
  name: string;
  /** purchase (the operator's `credits add --price`) or transfer (from the parent account). */
  kind: string;
  description: string;
  credits: number;
  price_cents: number;
  /** The VAT rate in hundredths of a percent: 2000 is 20 %. */
  vat_basis_points: number;
  vat_cents: number;
  total_cents: number;
  currency: string;
  status: string;
  payment_type: string;
  from_account_id: number | null;
  /** The issuer's lines, one per line, as configured when the invoice was issued. */
  issuer: string;
  /** The customer's profile (JSON) when the invoice was issued. */
  customer: string;
  created_at: number;
  validated_at: number | null;
}

/** The last invoice number given in each year: numbers follow each other without gaps. */
export interface InvoiceNumbersTable {
  year: number;
  last_number: number;
}

/** One request's Idempotency-Key (idempotency): its claim while it runs, then its first answer, for 24 h. */
export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  /** `POST /send`, `GET /send`, `POST /send/lists`. */
  route: string;
  /** SHA-256 (hex) of the request's canonical form. */
  request_hash: string;
  /** running or done. */
  state: string;
  /** Who runs the request (a random token) while running; null once done. */
  claim: string | null;
  lease_until: number | null;
  /** The answer's envelope status (1, or a refusal's negative status), HTTP code and body (JSON). */
  status: number | null;
  http_code: number | null;
  response: string | null;
  created_at: number;
}

/** Messages an account had accepted on a day of TIMEZONE (`yyyy-MM-dd`), for DAILY_MESSAGE_LIMIT. */
export interface DailyMessageCountsTable {
  account_id: number;
  day: string;
  messages: number;
}

/**
 * A worker's term of leases (store/lease-holder.ts): the rows of `queue` it leased name it in `lease_owner`, and
 * stay its own while it renews `lease_until`.
 */
export interface LeaseHoldersTable {
  id: Generated<number>;
  /** `messages` or `webhook_deliveries`. */
  queue: string;
  host: string;
  pid: number;
  started_at: number;
  lease_until: number;
}

export interface Database {
  accounts: AccountsTable;
  credit_ledger: CreditLedgerTable;
  tokens: TokensTable;
  balance_notifications: BalanceNotificationsTable;
  webhooks: WebhooksTable;
  lists: ListsTable;
  contacts: ContactsTable;
  blacklist: NumberListTable;
  npai: NumberListTable;
  campaigns: CampaignsTable;
  campaign_lists: CampaignListsTable;
  messages: MessagesTable;
  links: LinksTable;
  clicks: ClicksTable;
  message_parts: MessagePartsTable;
  orphan_receipts: OrphanReceiptsTable;
  mo_fragments: MoFragmentsTable;
  replies: RepliesTable;
  help_answers: HelpAnswersTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  alert_jobs: AlertJobsTable;
  cursors: CursorsTable;
  lookups: LookupsTable;
  invoices: InvoicesTable;
  invoice_numbers: InvoiceNumbersTable;
  retention: RetentionTable;
  lease_holders: LeaseHoldersTable;
  idempotency_keys: IdempotencyKeysTable;
  daily_message_counts: DailyMessageCountsTable;
  connector_status: ConnectorStatusTable;
  console_sessions: ConsoleSessionsTable;
  users: UsersTable;
  user_recovery_codes: UserRecoveryCodesTable;
  smpp_users: SmppUsersTable;
  smpp_submits: SmppSubmitsTable;
  smpp_parts: SmppPartsTable;
  smpp_outbox: SmppOutboxTable;
  smpp_binds: SmppBindsTable;
  prices: PricesTable;
  audit_log: AuditLogTable;
  sender_ids: SenderIdsTable;
  content_rules: ContentRulesTable;
  operator_accounts: OperatorAccountsTable;
  monthly_message_counts: MonthlyMessageCountsTable;
  account_limits: AccountLimitsTable;
  account_pacing: AccountPacingTable;
}

/**
 * Every table of `Database`, by name, for what must visit them all (`pigeon move`). The object is checked
 * against `Database` both ways: a table added to `Database` and not here, or named here and not there, fails
 * the type check.
 */
export const tableNames = Object.keys({
  accounts: true,
  credit_ledger: true,
  tokens: true,
  balance_notifications: true,
  webhooks: true,
  lists: true,
  contacts: true,
  blacklist: true,
  npai: true,
  campaigns: true,
  campaign_lists: true,
  messages: true,
  links: true,
  clicks: true,
  message_parts: true,
  orphan_receipts: true,
  mo_fragments: true,
  replies: true,
  help_answers: true,
  events: true,
  webhook_deliveries: true,
  webhook_attempts: true,
  alert_jobs: true,
  cursors: true,
  lookups: true,
  invoices: true,
  invoice_numbers: true,
  retention: true,
  lease_holders: true,
  idempotency_keys: true,
  daily_message_counts: true,
  connector_status: true,
  console_sessions: true,
  users: true,
  user_recovery_codes: true,
  smpp_users: true,
  smpp_submits: true,
  smpp_parts: true,
  smpp_outbox: true,
  smpp_binds: true,
  prices: true,
  audit_log: true,
  sender_ids: true,
  content_rules: true,
  operator_accounts: true,
  monthly_message_counts: true,
  account_limits: true,
  account_pacing: true,
} satisfies Record<keyof Database, true>) as (keyof Database)[];
