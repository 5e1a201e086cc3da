// The only reader of process.env: one schema, parsed once, failing fast with every bad variable named.
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';

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
  ROLE: oneOf(['all', 'api', 'worker'], 'all'),
  TRUST_PROXY: Type.Boolean({ default: false }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
  MAX_RECIPIENTS: Type.Integer({ minimum: 1, default: 500_000 }),
  TIMEZONE: Type.String({ default: 'Europe/Paris' }),
  DEFAULT_COUNTRY_CODES: Type.Optional(Type.String()),
  /** Countries a campaign may send to, as ISO 3166 codes (`FR,BE`); unset allows every country. */
  ALLOWED_COUNTRIES: Type.Optional(Type.String({ pattern: '^\\s*[A-Za-z]{2}(\\s*,\\s*[A-Za-z]{2})*\\s*$' })),
  /** The opt-out mention added to marketing texts. */
  STOP_MENTION: Type.String({ minLength: 1, default: 'STOP au 36180' }),
});

export type Config = Static<typeof ConfigSchema> & { LINK_HOST: string; LINK_BASE_URL: string };

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
  return {
    ...config,
    LINK_HOST: linkHost,
    LINK_BASE_URL: (config.LINK_BASE_URL ?? `http://${linkHost}:${config.LINK_PORT}`).replace(/\/+$/, ''),
  };
}
