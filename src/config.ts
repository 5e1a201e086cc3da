// The only reader of process.env: one schema, parsed once, failing fast with every bad variable named.
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { parseSendingWindow, type SendingWindow } from './sms/sending-window.ts';

const port = (fallback: number) => Type.Integer({ minimum: 0, maximum: 65535, default: fallback });
const oneOf = <T extends string>(values: readonly T[], fallback: T) =>
  Type.Enum(values, { default: fallback });

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
  TRUST_PROXY: Type.Boolean({ default: false }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
  MAX_RECIPIENTS: Type.Integer({ minimum: 1, default: 500_000 }),
  /** How often the retention job deletes what is older than each account's settings (GET/PUT /retention). */
  RETENTION_EVERY: Type.String({ pattern: '^\\d+(s|m|h|d)$', default: '1h' }),
  /** Credits charged per number looked up with POST /lookup. */
  LOOKUP_COST: Type.Integer({ minimum: 0, default: 0 }),
  TIMEZONE: Type.String({ default: 'Europe/Paris' }),
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
  SMPP_URL: Type.Optional(Type.String({ pattern: '^smpp://[^:@/]+:[^@/]*@[^:/]+(:\\d+)?/?$' })),
  SMPP_BINDS: Type.Integer({ minimum: 1, maximum: 32, default: 1 }),
  SMPP_WINDOW: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  /** Parts per second over all binds; 0 for no limit. */
  SMPP_TPS: Type.Integer({ minimum: 0, default: 0 }),
  SMPP_SYSTEM_TYPE: Type.String({ default: '' }),
  SMPP_ENQUIRE_LINK_MS: Type.Integer({ minimum: 1000, default: 30_000 }),
  SMPP_RESPONSE_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  SIM_DLR_DELAY_MS: Type.Integer({ minimum: 0, default: 1000 }),
  /** Receipt outcomes of the simulator and their weights. */
  SIM_OUTCOMES: Type.String({ default: 'DELIVRD=97,UNDELIV=2,EXPIRED=1' }),
  /** How long a message may wait to be sent before it expires instead: 48h, 90m, 3600s, 2d. */
  MESSAGE_VALIDITY: Type.String({ pattern: '^\\d+(s|m|h|d)$', default: '48h' }),
  /**
   * Sends are refused with HTTP 429 (and Retry-After) while this many messages are due and not yet taken
   * by a delivery worker; 0 for no limit.
   */
  MAX_QUEUED_MESSAGES: Type.Integer({ minimum: 0, default: 0 }),
  WORKER_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10_000, default: 1000 }),
  WORKER_POLL_MS: Type.Integer({ minimum: 5, default: 200 }),
  LEASE_SECONDS: Type.Integer({ minimum: 5, default: 120 }),
  /** Replies that opt the number out, compared without case or accents. */
  STOP_KEYWORDS: Type.String({ default: 'STOP,STOP SMS,ARRET,UNSUBSCRIBE' }),
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
  LINK_HOST: string;
  LINK_BASE_URL: string;
  MESSAGE_VALIDITY_MS: number;
  /** MARKETING_HOURS, MARKETING_DAYS and MARKETING_HOLIDAYS in TIMEZONE, read once here. */
  MARKETING_WINDOW: SendingWindow;
};

const unitMs: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `48h` → milliseconds. */
export const durationMs = (value: string): number => Number(value.slice(0, -1)) * unitMs[value.slice(-1)];

export class ConfigError extends Error {}

/** Parses an environment (process.env by default); throws ConfigError listing every invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.keys(ConfigSchema.properties);
  const raw: Record<string, unknown> = {};
  for (const key of known) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const withDefaults = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  if (errors.length > 0) {
    const lines = errors.map((e) => {
      const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
      return `${e.instancePath.slice(1) || '(config)'}: ${e.message}${allowed ? ` (${allowed.join(', ')})` : ''}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const config = withDefaults as Static<typeof ConfigSchema>;
  const linkHost = config.LINK_HOST ?? config.HOST;
  if (config.TRANSPORT === 'smpp' && !config.SMPP_URL) {
    throw new ConfigError(
      'invalid configuration:\n  SMPP_URL: required when TRANSPORT=smpp (smpp://system_id:password@host:port)',
    );
  }
  let marketingWindow: SendingWindow;
  try {
    marketingWindow = parseSendingWindow({
      hours: config.MARKETING_HOURS,
      days: config.MARKETING_DAYS,
      holidays: config.MARKETING_HOLIDAYS,
      zone: config.TIMEZONE,
    });
  } catch (error) {
    throw new ConfigError(`invalid configuration:\n  ${(error as Error).message}`);
  }
  return {
    ...config,
    MESSAGE_VALIDITY_MS: durationMs(config.MESSAGE_VALIDITY),
    MARKETING_WINDOW: marketingWindow,
    LINK_HOST: linkHost,
    LINK_BASE_URL: (config.LINK_BASE_URL ?? `http://${linkHost}:${config.LINK_PORT}`).replace(/\/+$/, ''),
  };
}
