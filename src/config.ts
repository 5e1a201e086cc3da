// The only reader of process.env: one schema, parsed once, failing fast with every bad variable named.
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { minEveryMs } from './shared/periodic-job.ts';
import { schemaErrors } from './shared/schema-errors.ts';
import { parseTrustProxy } from './shared/trusted-proxies.ts';
import { maxConcatenatedParts } from './sms/segments.ts';
import { parseSendingWindow, type SendingWindow } from './sms/sending-window.ts';

const port = (fallback: number) => Type.Integer({ minimum: 0, maximum: 65535, default: fallback });
const oneOf = <T extends string>(values: readonly T[], fallback: T) =>
  Type.Enum(values, { default: fallback });
/** An age after which pruning deletes a kind of row (`30d`), or `0`/`off` to keep it. */
const pruneAge = (fallback: string) =>
  Type.String({ pattern: '^([1-9]\\d*(s|m|h|d)|0|off)$', default: fallback });

export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: port(8080),
  LINK_HOST: Type.Optional(Type.String()),
  LINK_PORT: port(8081),
  LINK_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  SHORT_CODE_LENGTH: Type.Integer({ minimum: 8, maximum: 22, default: 10 }),
  DATABASE_URL: Type.String({ default: './data/pigeon.db' }),
  SQLITE_SYNCHRONOUS: oneOf(['NORMAL', 'FULL'], 'NORMAL'),
  PG_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  /** How long a query waits for a PostgreSQL connection, and for its answer once sent, before it fails. */
  PG_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
  PG_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  /**
   * What this process serves: all of it, the API (with short links and the click fold), or the workers
   * (delivery, webhooks and alerts: `worker`, or one of them alone: `delivery`, `webhooks`).
   */
  ROLE: oneOf(['all', 'api', 'worker', 'delivery', 'webhooks'], 'all'),
  /**
   * How `pigeon serve` with ROLE=all runs: one process per role (api, delivery, webhooks) under a
   * supervisor, so every core works; or everything in one process.
   */
  PROCESSES: oneOf(['per-role', 'one'], 'per-role'),
  /**
   * Under the supervisor, the old-space heap of the delivery process in MB (V8's --max-old-space-size); 0
   * leaves V8's default. Its live heap is small and bounded by its batches (about 30–50 MB), but left alone
   * V8 lets garbage grow past 130 MB under load before collecting. The webhooks process keeps V8's default:
   * its heap stays under 70 MB without a limit, and a limit made it collect so often that its CPU per
   * delivery rose by a quarter (bench/README.md).
   */
  WORKER_HEAP_MB: Type.Integer({ minimum: 0, maximum: 65_536, default: 128 }),
  TRUST_PROXY: Type.String({ default: 'false' }),
  /** API requests per second per token (per account for legacy body credentials); 0 for no limit. */
  RATE_LIMIT_TOKEN_RPS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  /**
   * Requests per second per client IP that carry no valid credentials (the docs, unknown paths, failed
   * sign-ins); 0 for no limit.
   */
  RATE_LIMIT_IP_RPS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 50 }),
  /** Failed sign-ins from one IP within RATE_LIMIT_AUTH_WINDOW before its sign-ins answer 429; 0 for none. */
  RATE_LIMIT_AUTH_FAILURES: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 20 }),
  /** Counted from the IP's first failure, 1s to 24h (s, m or h): 1m. */
  RATE_LIMIT_AUTH_WINDOW: Type.String({ pattern: '^\\d+(s|m|h)$', default: '1m' }),
  /** One log line per API request (method, route, status, latency, account, request id). */
  ACCESS_LOG: oneOf(['off', 'on'], 'off'),
  /**
   * How long a graceful stop may take before the process exits non-zero, naming what was still running:
   * 1s to 24h (s, m or h).
   */
  SHUTDOWN_TIMEOUT: Type.String({ pattern: '^\\d+(s|m|h)$', default: '30s' }),
  /** Prometheus metrics (GET /metrics); `off` removes their cost, to measure it. */
  METRICS: oneOf(['on', 'off'], 'on'),
  /**
   * Serve /metrics, /health and /ready on this port (on METRICS_HOST) instead of the API's: how a worker
   * process, which has no API, exposes them. Unset: on the API's port.
   */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  METRICS_HOST: Type.Optional(Type.String({ minLength: 1 })),
  /** When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
  /**
   * The largest XML body: XML takes far more memory and time to parse than JSON (a 10 MB body took over a
   * gigabyte and seconds), so large requests go as JSON.
   */
  XML_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 2 * 1024 * 1024 }),
  /**
   * The largest body of a request with no token in its Authorization header (or query): only legacy
   * clients signing in with `sms.authentication` in the body send one, and it is read before it is known
   * whose it is.
   */
  UNAUTHENTICATED_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
  /** A body larger than this (or of unknown length) waits for one of LARGE_BODY_CONCURRENCY permits… */
  LARGE_BODY_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
  /** …held while it is read, parsed and answered, so many large bodies at once cannot exhaust memory. */
  LARGE_BODY_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
  /**
   * The most bytes of such large bodies held at once (declared lengths, and chunked bodies as they arrive),
   * from their admission to their answer: a body that does not fit is refused with HTTP 503. At least
   * BODY_LIMIT_BYTES, so that a body of the largest size can be read at all.
   */
  LARGE_BODY_BUDGET_BYTES: Type.Integer({ minimum: 1024, default: 40 * 1024 * 1024 }),
  /** How long a client has to send a request's body once its headers are in: past it, HTTP 408. */
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  /** How long a client has to send a request's headers: past it, HTTP 408 and the connection is closed. */
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 10_000 }),
  /** The most SMS parts one message may take (a longer text is refused); 255 is what the UDH can count. */
  MAX_PARTS: Type.Integer({ minimum: 1, maximum: maxConcatenatedParts, default: 10 }),
  MAX_RECIPIENTS: Type.Integer({ minimum: 1, default: 500_000 }),
  /**
   * How often the retention job deletes what is older than each account's settings (GET/PUT /retention): 1s
   * or more; a period longer than a timer holds (about 24.8 days) waits that long, as PRUNE_EVERY's does.
   */
  RETENTION_EVERY: Type.String({ pattern: '^\\d+(s|m|h|d)$', default: '1h' }),
  /** Credits charged per number looked up with POST /lookup. */
  LOOKUP_COST: Type.Integer({ minimum: 0, default: 0 }),
  TIMEZONE: Type.String({ default: 'Europe/Paris' }),
  /** How long a console sign-in lasts, in hours; then its page asks for the password again. */
  CONSOLE_SESSION_HOURS: Type.Integer({ minimum: 1, maximum: 24 * 30, default: 12 }),
  /** How long the link of a password reset (POST /users/forgot) works, in minutes. */
  RESET_LINK_MINUTES: Type.Integer({ minimum: 5, maximum: 24 * 60, default: 60 }),
  /** The console's address as users reach it, for the links of invitations (`<it>/accept?token=…`). */
  CONSOLE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** Countries a campaign may send to, as ISO 3166 codes (`FR,BE`); unset allows every country. */
  ALLOWED_COUNTRIES: Type.Optional(Type.String({ pattern: '^\\s*[A-Za-z]{2}(\\s*,\\s*[A-Za-z]{2})*\\s*$' })),
  /** The opt-out mention added to marketing texts. */
  STOP_MENTION: Type.String({ minLength: 1, default: 'STOP au 36180' }),
  /** When marketing sends may go out, in TIMEZONE: wall-clock hours (closing time excluded)… */
  MARKETING_HOURS: Type.String({ default: '08:00-20:00' }),
  /** …on these ISO weekdays (1 Monday … 7 Sunday, ranges or a list)… */
  MARKETING_DAYS: Type.String({ default: '1-6' }),
  /** …except these public holidays. Outside the window a marketing send waits for the next opening. */
  MARKETING_HOLIDAYS: oneOf(['FR', 'none'], 'FR'),
  /** How messages leave: the built-in carrier simulator, or an SMSC over SMPP. */
  TRANSPORT: oneOf(['simulator', 'smpp'], 'simulator'),
  /**
   * Several SMSCs and the routes between them (src/delivery/routing/): a YAML or JSON file, by its extension.
   * Unset, TRANSPORT and SMPP_* / SIM_* describe the one connector `default`, which every message takes.
   */
  CONNECTORS_FILE: Type.Optional(Type.String({ minLength: 1 })),
  SMPP_URL: Type.Optional(Type.String({ pattern: '^smpp://[^:@/]+:[^@/]*@[^:/]+(:\\d+)?/?$' })),
  SMPP_BINDS: Type.Integer({ minimum: 1, maximum: 32, default: 1 }),
  SMPP_WINDOW: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  /** Parts per second over all binds; 0 for no limit. */
  SMPP_TPS: Type.Integer({ minimum: 0, default: 0 }),
  SMPP_SYSTEM_TYPE: Type.String({ default: '' }),
  SMPP_ENQUIRE_LINK_MS: Type.Integer({ minimum: 1000, default: 30_000 }),
  SMPP_RESPONSE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  /**
   * How long connecting to the SMSC and binding may take: past it the attempt is abandoned, the socket closed,
   * a warning logged, and the bind retried with the reconnection backoff.
   */
  SMPP_BIND_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  /**
   * Pigeon's own SMPP server (src/smpp-server), where customers' ESMEs bind with their account's SMPP users:
   * plain SMPP on this port (unset: no SMPP server), on SMPP_SERVER_HOST (default HOST); SMPP over TLS on
   * SMPP_SERVER_TLS_PORT with SMPP_SERVER_TLS_CERT and SMPP_SERVER_TLS_KEY (PEM files). Served by the API's role.
   */
  SMPP_SERVER_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  SMPP_SERVER_HOST: Type.Optional(Type.String({ minLength: 1 })),
  SMPP_SERVER_TLS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  SMPP_SERVER_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  SMPP_SERVER_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SIM_DLR_DELAY_MS: Type.Integer({ minimum: 0, default: 1000 }),
  /** Receipt outcomes of the simulator and their weights. */
  SIM_OUTCOMES: Type.String({ default: 'DELIVRD=97,UNDELIV=2,EXPIRED=1' }),
  /** How long a message may wait to be sent before it expires instead: 48h, 90m, 3600s, 2d. */
  MESSAGE_VALIDITY: Type.String({ pattern: '^\\d+(s|m|h|d)$', default: '48h' }),
  /**
   * How long a submitted message may wait for its receipt: past it, it is closed as expired (DLR 12), with its
   * DLR event, so its campaign can finish. A receipt that comes later still wins. 72h, 3d.
   */
  DLR_WAIT: Type.String({ pattern: '^[1-9]\\d*(s|m|h|d)$', default: '72h' }),
  /**
   * Pruning of what only Pigeon reads, in the webhooks role: how often, rows per statement, and the pause
   * between two statements (so a backlog never holds the write lock for long).
   */
  PRUNE_EVERY: Type.String({ pattern: '^[1-9]\\d*(s|m|h|d)$', default: '1h' }),
  PRUNE_BATCH_ROWS: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 }),
  PRUNE_PAUSE_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 50 }),
  /** How old each kind gets before it is pruned: 30d, 12h; 0 or off keeps it. */
  PRUNE_WEBHOOK_ATTEMPTS_AFTER: pruneAge('30d'),
  PRUNE_WEBHOOK_DELIVERIES_AFTER: pruneAge('30d'),
  PRUNE_EVENTS_AFTER: pruneAge('7d'),
  PRUNE_ALERT_JOBS_AFTER: pruneAge('30d'),
  PRUNE_CLICKS_AFTER: pruneAge('30d'),
  PRUNE_ORPHAN_RECEIPTS_AFTER: pruneAge('1d'),
  /**
   * Sends are refused with HTTP 429 (and Retry-After) while this many messages are due and not yet taken
   * by a delivery worker; 0 for no limit.
   */
  MAX_QUEUED_MESSAGES: Type.Integer({ minimum: 0, default: 0 }),
  /**
   * Messages (recipients kept after filtering) an account may have accepted per day of TIMEZONE; a send
   * that would pass it is refused with -7. 0 for no limit.
   */
  DAILY_MESSAGE_LIMIT: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  /**
   * The same per month of TIMEZONE: the default of every account without a monthly quota of its own or its
   * parent's (`pigeon account limits`). 0 for no limit.
   */
  MONTHLY_MESSAGE_LIMIT: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  /**
   * SMS parts per second each account's delivery is paced to (its messages queued at spread due times, never
   * refused), unless the account or its parent has its own (`pigeon account limits`). 0 for no pacing.
   */
  PARTS_PER_SECOND_LIMIT: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  /**
   * `required`: an account sends only from sender IDs the operator approved for it or its parent (`POST
   * /sender`, `pigeon sender approve`); a send naming any other sender is -7. `off` (default): any valid sender.
   */
  SENDER_APPROVAL: oneOf(['off', 'required'], 'off'),
  WORKER_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10_000, default: 1000 }),
  WORKER_POLL_MS: Type.Integer({ minimum: 5, default: 200 }),
  /**
   * How long a worker's hold on the messages and webhook deliveries it leased outlives its last heartbeat
   * (renewed every fifth of it): after a crash, another worker takes them over within about this.
   */
  LEASE_SECONDS: Type.Integer({ minimum: 3, maximum: 600, default: 15 }),
  /**
   * Replies that opt the number out, compared as a whole reply without case, accents, repeated spaces or
   * ending punctuation ("Stop.", "ARRÊT !").
   */
  STOP_KEYWORDS: Type.String({ default: 'STOP,STOP SMS,ARRET,UNSUBSCRIBE' }),
  /** Replies that take the number off the account's blacklist (opt back in), compared as STOP_KEYWORDS. */
  START_KEYWORDS: Type.String({ default: 'START,UNSTOP,DEMARRER' }),
  /** Replies answered with HELP_TEXT, compared as STOP_KEYWORDS. */
  HELP_KEYWORDS: Type.String({ default: 'HELP,AIDE,INFO' }),
  /** The free SMS answering a HELP reply; unset: HELP replies are recorded as MO and not answered. */
  HELP_TEXT: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  /** At most one HELP answer per number and account within this (s, m, h or d): a loop with a robot stops. */
  HELP_ANSWER_INTERVAL: Type.String({ pattern: '^[1-9]\\d*(s|m|h|d)$', default: '10m' }),
  /** Receipt error codes meaning the number does not exist (it joins the NPAI list). */
  NPAI_ERROR_CODES: Type.String({ default: '001' }),
  /** Let webhooks reach private, loopback and other non-public addresses (a trusted network only). */
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  /** A webhook with no successful delivery for this long is paused: 5d, 36h. */
  WEBHOOK_PAUSE_AFTER: Type.String({ pattern: '^\\d+(s|m|h|d)$', default: '5d' }),
  WEBHOOK_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 5000 }),
  /** The whole request, from connecting to the end of the answer. */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15_000 }),
  /** The furthest a receiver's Retry-After may push its next attempt: 1h, 30m. */
  WEBHOOK_RETRY_AFTER_MAX: Type.String({ pattern: '^\\d+(s|m|h|d)$', default: '1h' }),
  /**
   * Requests in flight to one webhook, so a slow receiver slows only its own deliveries. 32 lets one
   * receiver on a fast network take a campaign's receipts as fast as they come (8 capped it near 5,000/s).
   */
  WEBHOOK_CONCURRENCY_PER_WEBHOOK: Type.Integer({ minimum: 1, maximum: 256, default: 32 }),
  /** Webhook deliveries one worker process holds at once (in flight or queued), over all webhooks. */
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 256 }),
  /**
   * A webhook with no answer for this long while its requests are out (or whose last answer took as long, or
   * never came) gives back its queued deliveries and holds only its requests in flight until it answers sooner.
   */
  WEBHOOK_SLOW_MS: Type.Integer({ minimum: 100, default: 1000 }),
  /** Where balance alert e-mails go out: smtp://user:pass@host:587 or smtps://…:465; unset sends none. */
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://[^/?#]+' })),
  SMTP_FROM: Type.String({ minLength: 3, default: 'pigeon@localhost' }),
  /** The sender of the free balance alert SMS: 3–11 letters or digits with a letter, or up to 15 digits. */
  ALERT_SENDER: Type.String({
    pattern: '^((?=.*[A-Za-z])[A-Za-z0-9]{3,11}|[0-9]{1,15})$',
    default: 'Pigeon',
  }),
  /** VAT added to the price of credits on invoices, in percent with up to 2 decimals: 20, 5.5. */
  INVOICE_VAT_PERCENT: Type.String({ pattern: '^(100(\\.0{1,2})?|\\d{1,2}(\\.\\d{1,2})?)$', default: '20' }),
  /** The currency of invoices when `credits add --price` names none, and of transfers' invoices (ISO 4217). */
  INVOICE_CURRENCY: Type.String({ pattern: '^[A-Z]{3}$', default: 'EUR' }),
  /** Who issues the invoices: name and address, lines separated by `|`. */
  INVOICE_ISSUER: Type.String({ minLength: 1, maxLength: 1000, default: 'Pigeon' }),
  /** Invoice numbers are PREFIX-YEAR-NNNNNN. */
  INVOICE_PREFIX: Type.String({ pattern: '^[A-Za-z0-9]{1,12}$', default: 'PG' }),
});

export type Config = Static<typeof ConfigSchema> & {
  CONSOLE_URL: string;
  LINK_HOST: string;
  LINK_BASE_URL: string;
  MESSAGE_VALIDITY_MS: number;
  /** MARKETING_HOURS, MARKETING_DAYS and MARKETING_HOLIDAYS in TIMEZONE, read once here. */
  MARKETING_WINDOW: SendingWindow;
};

const unitMs: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `48h` → milliseconds. */
export const durationMs = (value: string): number => Number(value.slice(0, -1)) * unitMs[value.slice(-1)];

/** A configuration that cannot run; `problems` lists what is wrong, one line each, for `pigeon config check`. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(message: string, problems?: string[]) {
    super(message);
    // Messages are a heading and one indented line per problem.
    const lines = message
      .split('\n')
      .slice(1)
      .map((line) => line.trim())
      .filter((line) => line !== '');
    this.problems = problems ?? (lines.length > 0 ? lines : [message]);
  }
}

const invalid = (problems: string[]) =>
  new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`, problems);

/** Parses an environment (process.env by default); throws ConfigError listing every invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.keys(ConfigSchema.properties);
  const raw: Record<string, unknown> = {};
  for (const key of known) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const withDefaults = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  const lines = schemaErrors(ConfigSchema, withDefaults, '(config)');
  if (lines.length > 0) throw invalid(lines);
  const config = withDefaults as Static<typeof ConfigSchema>;
  const linkHost = config.LINK_HOST ?? config.HOST;
  // Each rule between variables adds its line: a start, or `pigeon config check`, names every problem at once.
  const problems: string[] = [];
  if (config.TRANSPORT === 'smpp' && !config.SMPP_URL) {
    problems.push('SMPP_URL: required when TRANSPORT=smpp (smpp://system_id:password@host:port)');
  }
  if (
    config.SMPP_SERVER_TLS_PORT !== undefined &&
    (config.SMPP_SERVER_TLS_CERT === undefined || config.SMPP_SERVER_TLS_KEY === undefined)
  ) {
    throw new ConfigError(
      'invalid configuration:\n  SMPP_SERVER_TLS_PORT: needs SMPP_SERVER_TLS_CERT and SMPP_SERVER_TLS_KEY (PEM files)',
    );
  }
  // Bounded so a timer can hold them (Node's timers stop at about 24.8 days).
  for (const key of ['RATE_LIMIT_AUTH_WINDOW', 'SHUTDOWN_TIMEOUT'] as const) {
    const ms = durationMs(config[key]);
    if (!(ms >= 1000 && ms <= 86_400_000))
      problems.push(`${key}: must be from 1s to 24h, got ${config[key]}`);
  }
  try {
    parseTrustProxy(config.TRUST_PROXY);
  } catch (error) {
    problems.push(`TRUST_PROXY: ${(error as Error).message}`);
  }
  if (config.LARGE_BODY_BUDGET_BYTES < config.BODY_LIMIT_BYTES) {
    problems.push(
      `LARGE_BODY_BUDGET_BYTES: must be at least BODY_LIMIT_BYTES (${config.BODY_LIMIT_BYTES}), or a body of the largest size could never be read; got ${config.LARGE_BODY_BUDGET_BYTES}`,
    );
  }
  // A job's passes would run back to back (shared/periodic-job.ts).
  if (durationMs(config.RETENTION_EVERY) < minEveryMs) {
    problems.push(
      `RETENTION_EVERY: must be 1s or more (the time between two retention passes), got ${config.RETENTION_EVERY}`,
    );
  }
  let marketingWindow: SendingWindow | undefined;
  try {
    marketingWindow = parseSendingWindow({
      hours: config.MARKETING_HOURS,
      days: config.MARKETING_DAYS,
      holidays: config.MARKETING_HOLIDAYS,
      zone: config.TIMEZONE,
    });
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (problems.length > 0 || marketingWindow === undefined) throw invalid(problems);
  return {
    ...config,
    MESSAGE_VALIDITY_MS: durationMs(config.MESSAGE_VALIDITY),
    MARKETING_WINDOW: marketingWindow,
    LINK_HOST: linkHost,
    CONSOLE_URL: (
      config.CONSOLE_URL ??
      `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${config.PORT}/console`
    ).replace(/\/+$/, ''),
    LINK_BASE_URL: (config.LINK_BASE_URL ?? `http://${linkHost}:${config.LINK_PORT}`).replace(/\/+$/, ''),
  };
}
