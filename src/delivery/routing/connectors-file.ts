// Reads CONNECTORS_FILE (YAML or JSON, by its extension) into the routing table: the SMSC connections and the
// ordered routes between them. The file is checked against its schema (`connectors-schema.ts`), then by the
// rules a schema cannot say (`connectors-rules.ts`); every mistake is listed with its path, as the
// configuration's are (`routes[1].connectors[0]: unknown connector "x"`), in one ConfigError, so `pigeon
// serve` stops at once naming all of them. Without the file, TRANSPORT and SMPP_* / SIM_* describe one
// connector named `default` and one catch-all route.
import { readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import Value from 'typebox/value';
import { parse as parseYaml } from 'yaml';
import { type Config, ConfigError } from '../../config.ts';
import { schemaErrors } from '../../shared/schema-errors.ts';
import { parseOutcomes, type SimulatedOutcome } from '../simulator/simulator-transport.ts';
import type { BindMode } from '../smpp/smpp-options.ts';
import { crossFieldErrors, outcomesOf } from './connectors-rules.ts';
import {
  type ConnectorEntry,
  type ConnectorsFile,
  ConnectorsFileSchema,
  type RouteEntry,
} from './connectors-schema.ts';

export type Pushtype = 'alert' | 'marketing';
export type { BindMode };

interface ConnectorBase {
  name: string;
  /** Parts per second this connector may submit; 0 for no limit. */
  tps: number;
}

export interface SmppConnectorSpec extends ConnectorBase {
  kind: 'smpp';
  /** `smpp://system_id:password@host:port` or `ssmpp://…` for TLS. */
  url: string;
  binds: number;
  bindMode: BindMode;
  window: number;
  systemType: string;
  defaultTon?: number;
  defaultNpi?: number;
  enquireLinkMs: number;
  responseTimeoutMs: number;
  bindTimeoutMs: number;
  /** Only for `ssmpp://`: the CA to trust (an absolute path) and whether the certificate must name the host. */
  tls?: { caFile?: string; checkServerName: boolean };
}

export interface SimulatorConnectorSpec extends ConnectorBase {
  kind: 'simulator';
  dlrDelayMs: number;
  outcomes: SimulatedOutcome[];
}

export type ConnectorSpec = SmppConnectorSpec | SimulatorConnectorSpec;

/** What a route looks at; an absent criterion accepts everything, a given one any of its values. */
export interface RouteMatch {
  /** Destination prefixes, digits with the country code first (`336`, `3361`). */
  prefix?: string[];
  /** ISO 3166-1 alpha-2 codes of the destination, upper case. */
  country?: string[];
  /** Sender IDs, compared without case. */
  sender?: string[];
  pushtype?: Pushtype[];
  /** Account ids. */
  account?: number[];
}

export interface RouteSpec {
  name: string;
  match: RouteMatch;
  /** Connector names, in failover order. */
  connectors: string[];
  strategy: 'failover' | 'weighted';
  /** One weight per connector, in the order of `connectors` (all 1 for failover). */
  weights: number[];
}

export interface RoutingTable {
  connectors: ConnectorSpec[];
  routes: RouteSpec[];
  /** Parts per second per sender ID (upper-cased key); a sender not listed gets `defaultSenderTps`. */
  senderTps: Map<string, number>;
  /** 0 for no limit. */
  defaultSenderTps: number;
  /** The file it was read from; undefined for the one-connector shorthand. */
  file?: string;
}

/** The name of the shorthand's connector and of its route. */
export const defaultName = 'default';

/** A connector of a valid file, with the defaults of SMPP_* and SIM_* for what it leaves out. */
function connectorSpec(entry: ConnectorEntry, config: Config, baseDir: string): ConnectorSpec {
  const url = entry.url.trim();
  if (url === 'simulator')
    return {
      kind: 'simulator',
      name: entry.name,
      tps: entry.tps,
      dlrDelayMs: entry.dlrDelayMs ?? config.SIM_DLR_DELAY_MS,
      outcomes: outcomesOf(entry.outcomes ?? config.SIM_OUTCOMES),
    };
  const caFile = entry.tls?.caFile;
  return {
    kind: 'smpp',
    name: entry.name,
    tps: entry.tps,
    url,
    binds: entry.binds,
    bindMode: entry.bindMode,
    window: entry.window,
    systemType: entry.systemType,
    defaultTon: entry.defaultTon,
    defaultNpi: entry.defaultNpi,
    enquireLinkMs: entry.enquireLinkMs ?? config.SMPP_ENQUIRE_LINK_MS,
    responseTimeoutMs: entry.responseTimeoutMs ?? config.SMPP_RESPONSE_TIMEOUT_MS,
    bindTimeoutMs: entry.bindTimeoutMs ?? config.SMPP_BIND_TIMEOUT_MS,
    tls:
      new URL(url).protocol === 'ssmpp:'
        ? {
            caFile: caFile === undefined ? undefined : resolve(baseDir, caFile),
            checkServerName: entry.tls?.checkServerName ?? true,
          }
        : undefined,
  };
}

/** A route of a valid file, its criteria normalized as the router compares them. */
function routeSpec(entry: RouteEntry): RouteSpec {
  const given = entry.match ?? {};
  const match: RouteMatch = {};
  if (given.prefix) match.prefix = given.prefix.map((p) => p.trim().replace(/^(\+|00)/, ''));
  if (given.country) match.country = given.country.map((c) => c.trim().toUpperCase());
  if (given.sender) match.sender = given.sender.map((s) => s.trim().toUpperCase());
  if (given.pushtype) match.pushtype = given.pushtype;
  if (given.account) match.account = given.account;
  const weights = entry.weights;
  return {
    name: entry.name,
    match,
    connectors: entry.connectors,
    strategy: entry.strategy,
    weights: Array.isArray(weights) ? weights : entry.connectors.map((c) => weights?.[c] ?? 1),
  };
}

/** Validates a parsed connectors file against its schema, then its cross-field rules; `file` names it in the error. */
export function readRoutingTable(raw: unknown, config: Config, file: string): RoutingTable {
  const baseDir = dirname(file);
  const value = Value.Default(ConnectorsFileSchema, Value.Convert(ConnectorsFileSchema, Value.Clone(raw)));
  const errors = [
    ...schemaErrors(ConnectorsFileSchema, value, '(file)'),
    ...crossFieldErrors(value, raw, baseDir),
  ];
  if (errors.length > 0)
    throw new ConfigError(
      `invalid CONNECTORS_FILE ${file} (${errors.length} error${errors.length > 1 ? 's' : ''}):\n  ${errors.join('\n  ')}`,
    );
  const valid = value as ConnectorsFile;
  return {
    connectors: valid.connectors.map((c) => connectorSpec(c, config, baseDir)),
    routes: valid.routes.map(routeSpec),
    senderTps: new Map(
      Object.entries(valid.senders ?? {}).map(([sender, tps]) => [sender.toUpperCase(), tps]),
    ),
    defaultSenderTps: valid.defaultSenderTps,
    file,
  };
}

/** The one connector of TRANSPORT and SMPP_* / SIM_*, and one route that takes every message. */
export function shorthandRoutingTable(config: Config): RoutingTable {
  const connector: ConnectorSpec =
    config.TRANSPORT === 'smpp'
      ? {
          kind: 'smpp',
          name: defaultName,
          url: config.SMPP_URL!,
          binds: config.SMPP_BINDS,
          bindMode: 'transceiver',
          window: config.SMPP_WINDOW,
          tps: config.SMPP_TPS,
          systemType: config.SMPP_SYSTEM_TYPE,
          enquireLinkMs: config.SMPP_ENQUIRE_LINK_MS,
          responseTimeoutMs: config.SMPP_RESPONSE_TIMEOUT_MS,
          bindTimeoutMs: config.SMPP_BIND_TIMEOUT_MS,
        }
      : {
          kind: 'simulator',
          name: defaultName,
          tps: 0,
          dlrDelayMs: config.SIM_DLR_DELAY_MS,
          outcomes: parseOutcomes(config.SIM_OUTCOMES),
        };
  return {
    connectors: [connector],
    routes: [{ name: defaultName, match: {}, connectors: [defaultName], strategy: 'failover', weights: [1] }],
    senderTps: new Map(),
    defaultSenderTps: 0,
  };
}

/** The routing table of this configuration: CONNECTORS_FILE when set, else the shorthand. */
export function loadRoutingTable(config: Config): RoutingTable {
  if (!config.CONNECTORS_FILE) return shorthandRoutingTable(config);
  const file = resolve(config.CONNECTORS_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `invalid configuration:\n  CONNECTORS_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const extension = extname(file).toLowerCase();
  let raw: unknown;
  try {
    if (extension === '.json') raw = JSON.parse(text);
    else if (extension === '.yaml' || extension === '.yml') raw = parseYaml(text);
    else
      throw new Error(
        `the file name must end in .yaml, .yml or .json to tell its format, got "${extension}"`,
      );
  } catch (error) {
    throw new ConfigError(`invalid CONNECTORS_FILE ${file}:\n  ${(error as Error).message}`);
  }
  return readRoutingTable(raw, config, file);
}
