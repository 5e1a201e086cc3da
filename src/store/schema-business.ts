// Row types of the tables of connectors' status, console sessions, the SMPP server, teams and the operator's
// business (migrations 022 to 037), as Kysely sees them; `Database` (schema.ts) names them all. Times are
// milliseconds since the epoch.
import type { Generated } from 'kysely';

/** A console sign-in (migration 024), found by the SHA-256 of its cookie. */
export interface ConsoleSessionsTable {
  id: Generated<number>;
  session_hash: string;
  /** The account that signed in. */
  account_id: number;
  /** The account whose view the session shows: the signed-in one, or one of its direct sub-accounts. */
  acting_account_id: number;
  /** Sent back by the console page in X-CSRF-Token on every change. */
  csrf_token: string;
  created_at: number;
  expires_at: number;
  /** The user who signed in (migration 032); every request reads that user's role again. */
  user_id: number | null;
  /** When a request last used it, from which address, with which browser (migration 036; null before). */
  last_used_at: number | null;
  ip: string | null;
  user_agent: string | null;
}

/** A delivery process's connector as it last published it (migration 022), for `pigeon connectors`. */
export interface ConnectorStatusTable {
  name: string;
  /** The publishing process: host name and process id. */
  instance: string;
  role: string;
  /** smpp or simulator. */
  kind: string;
  binds_up: number;
  binds_total: number;
  /** bound, connecting or down. */
  state: string;
  window_in_use: number;
  window_size: number;
  /** Parts accepted per second over the last ten seconds. */
  pps: number;
  last_error: string | null;
  last_error_at: number | null;
  updated_at: number;
}

/** A person of an account (migration 032, src/users). */
export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  /** Lower case, unique over every account. */
  email: string;
  /** scrypt; null until an invited user sets a password. */
  password_hash: string | null;
  role: string;
  /** SHA-256 of the open one-time link (invitation or reset), if any. */
  link_hash: string | null;
  link_expires_at: number | null;
  created_at: number;
  /** Base32 TOTP secret once two-factor is on (migration 036); the one being enrolled until confirmed. */
  totp_secret: string | null;
  totp_pending_secret: string | null;
  /** The time step of the last code accepted: a code works once. */
  totp_last_step: number | null;
  /** SHA-256 of a sign-in's pending second step (the password was right; a code is needed), and its end. */
  sign_in_hash: string | null;
  sign_in_expires_at: number | null;
  /** Wrong codes given to the pending sign-in: at `maxCodeFailures` it closes, and the password is asked again. */
  sign_in_failures: Generated<number>;
}

/** A user's recovery codes for two-factor (migration 036): their SHA-256, each used once. */
export interface UserRecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  used_at: number | null;
}

/** An account's SMPP credentials (migration 030): binds of the SMPP server sign in with them. */
export interface SmppUsersTable {
  id: Generated<number>;
  account_id: number;
  system_id: string;
  password_hash: string;
  /** Submits per second across the user's binds; 0 for no limit. */
  tps: number;
  max_binds: number;
  /** JSON array of IPs or CIDRs, or null for any address. */
  allowed_ips: string | null;
  created_at: number;
}

/** A campaign sent by an SMPP user's submit_sm (migration 030): where its receipts and replies go. */
export interface SmppSubmitsTable {
  campaign_id: number;
  smpp_user_id: number;
  source_addr: string;
  registered_delivery: number;
  /** The ids of a long message's earlier parts that asked for a receipt, comma-separated; else null. */
  part_ids: string | null;
  text_head: string;
  created_at: number;
}

/** The id answered to an earlier part of a long message, and the campaign the message became (migration 040). */
export interface SmppPartsTable {
  part_id: number;
  campaign_id: number;
  created_at: number;
}

/** An SMPP bind up on some process, counted while its server renews it (migration 039). */
export interface SmppBindsTable {
  id: Generated<number>;
  smpp_user_id: number;
  server: string;
  bound_at: number;
  alive_until: number;
}

/** A receipt or reply waiting for a receiver or transceiver bind of its SMPP user (migration 030). */
export interface SmppOutboxTable {
  id: Generated<number>;
  smpp_user_id: number;
  kind: string;
  source_addr: string;
  destination_addr: string;
  text: string;
  message_id: string | null;
  message_state: number | null;
  created_at: number;
  expires_at: number;
}

/** Credits per SMS part by destination (country or number prefix), per account; account 0 is the instance's. */
export interface PricesTable {
  account_id: number;
  /** ISO 3166-1 alpha-2 country (`FR`) or E.164 digits prefix (`3367`). */
  destination: string;
  credits: number;
}

/** One entry of the audit log (src/audit): who changed what, from where and when. Never updated. */
export interface AuditLogTable {
  id: Generated<number>;
  /** The account the change belongs to (the one acted on: a sub-account for a parent's lock of it). */
  account_id: number;
  at: number;
  /** `user`, `token`, `cli` or `pigeon`. */
  actor_kind: string;
  /** The token's or user's id; null for the CLI, Pigeon and legacy credentials. */
  actor_id: string | null;
  /** What names the actor to a reader: the token's name, the user's e-mail. */
  actor_label: string | null;
  /** `campaign.send`, `token.create`, `session.sign_in`, … */
  action: string;
  object_type: string | null;
  object_id: string | null;
  /** The client's address; null outside a request. */
  ip: string | null;
}

/** A sender ID an account asked for (migration 035): `pending` until the operator approves or refuses it. */
export interface SenderIdsTable {
  id: Generated<number>;
  account_id: number;
  sender: string;
  /** pending, approved or refused. */
  state: string;
  /** What the customer said of it when asking. */
  note: string | null;
  /** The operator's reason for a refusal. */
  reason: string | null;
  created_at: number;
  decided_at: number | null;
}

/** A content rule (migration 035): for every account when `account_id` is null. */
export interface ContentRulesTable {
  id: Generated<number>;
  account_id: number | null;
  /** domain (a link's host or a parent domain of it), word (a whole word, without case) or pattern (a regex). */
  kind: string;
  value: string;
  /** refuse (the send is -7) or hold (its campaign waits for the operator). */
  action: string;
  created_at: number;
}

/** An account whose tokens may call `/operator/*` (migration 035). */
export interface OperatorAccountsTable {
  account_id: number;
  granted_at: number;
}

/** Messages an account had accepted in a month of TIMEZONE (`yyyy-MM`), for its monthly quota (migration 037). */
export interface MonthlyMessageCountsTable {
  account_id: number;
  month: string;
  messages: number;
}

/** The operator's limits of one account (src/limits); null: inherited, 0: none (migration 037). */
export interface AccountLimitsTable {
  account_id: number;
  daily_messages: number | null;
  monthly_messages: number | null;
  requests_per_second: number | null;
  parts_per_second: number | null;
  /** ISO codes, comma separated (`FR,BE`), or `*` for every country. */
  countries: string | null;
  updated_at: number;
}

/** Where a paced account's last accepted SMS part's slot ends (src/limits, migration 037). */
export interface AccountPacingTable {
  account_id: number;
  paced_until: number;
}
