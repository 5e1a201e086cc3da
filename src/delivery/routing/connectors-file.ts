// Reads CONNECTORS_FILE (YAML or JSON, by its extension): the SMSC connections and the ordered routes between
// them. Every mistake in the file is collected with its path (`routes[1].connectors[0]: unknown connector
// "x"`) and thrown together as one ConfigError, so `pigeon serve` stops at once naming all of them. Without
// the file, TRANSPORT and SMPP_* / SIM_* describe one connector named `default` and one catch-all route.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { isSupportedCountry } from 'libphonenumber-js/max';
import { parse as parseYaml } from 'yaml';
import { type Config, ConfigError } from '../../config.ts';
import { parseOutcomes, type SimulatedOutcome } from '../simulator/simulator-transport.ts';

export type Pushtype = 'alert' | 'marketing';
export type BindMode = 'transceiver' | 'transmitter-receiver';

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

const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

type Raw = Record<string, unknown>;

const isObject = (value: unknown): value is Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Collects the errors of one file, each with its path. */
class Problems {
  readonly list: string[] = [];
  add(path: string, message: string): void {
    this.list.push(`${path}: ${message}`);
  }
  unknownKeys(path: string, value: Raw, known: readonly string[]): void {
    for (const key of Object.keys(value)) {
      if (!known.includes(key))
        this.add(`${path}.${key}`, `unknown key (expected one of ${known.join(', ')})`);
    }
  }
}

function integer(
  problems: Problems,
  path: string,
  value: unknown,
  range: { min: number; max: number },
  fallback: number,
): number;
function integer(
  problems: Problems,
  path: string,
  value: unknown,
  range: { min: number; max: number },
  fallback?: number,
): number | undefined;
function integer(
  problems: Problems,
  path: string,
  value: unknown,
  range: { min: number; max: number },
  fallback?: number,
): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
    problems.add(path, `must be an integer from ${range.min} to ${range.max}, got ${JSON.stringify(value)}`);
    return fallback;
  }
  return value;
}

/** A string or a list of strings, as a list. */
function stringList(problems: Problems, path: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  list.forEach((item, i) => {
    const at = Array.isArray(value) ? `${path}[${i}]` : path;
    if (typeof item === 'string' || typeof item === 'number') out.push(String(item).trim());
    else problems.add(at, `must be a string, got ${JSON.stringify(item)}`);
  });
  if (out.length === 0) problems.add(path, 'must not be empty (leave the key out to accept every value)');
  return out;
}

/** Checks `smpp://user:pass@host:port` and `ssmpp://…`; undefined when it is neither (the error is added). */
function smppUrl(problems: Problems, path: string, value: string): 'smpp' | 'ssmpp' | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    problems.add(
      path,
      `"${value}" is not a URL (smpp://system_id:password@host:port, ssmpp://… or simulator)`,
    );
    return undefined;
  }
  const scheme = parsed.protocol.slice(0, -1);
  if (scheme !== 'smpp' && scheme !== 'ssmpp') {
    problems.add(path, `scheme must be smpp, ssmpp or the word simulator, got "${scheme}"`);
    return undefined;
  }
  if (!parsed.hostname) problems.add(path, 'has no host');
  if (!parsed.username) problems.add(path, 'has no system_id (smpp://system_id:password@host:port)');
  if ((parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search || parsed.hash)
    problems.add(path, 'must end after host:port (no path, query or fragment)');
  return scheme;
}

const connectorKeys = {
  common: ['name', 'url', 'tps'],
  smpp: [
    'binds',
    'bindMode',
    'window',
    'systemType',
    'defaultTon',
    'defaultNpi',
    'enquireLinkMs',
    'responseTimeoutMs',
    'bindTimeoutMs',
    'tls',
  ],
  simulator: ['dlrDelayMs', 'outcomes'],
} as const;

function readConnector(
  problems: Problems,
  path: string,
  raw: unknown,
  config: Config,
  baseDir: string,
): ConnectorSpec | undefined {
  if (!isObject(raw)) {
    problems.add(path, 'must be an object with name and url');
    return undefined;
  }
  let name = '';
  if (typeof raw.name !== 'string' || !namePattern.test(raw.name))
    problems.add(
      `${path}.name`,
      `must be 1 to 64 letters, digits, "_", "." or "-", got ${JSON.stringify(raw.name)}`,
    );
  else name = raw.name;
  /** An integer field of this connector, within its range; its fallback when absent or wrong. */
  const field = <F extends number | undefined>(key: string, min: number, max: number, fallback: F) =>
    integer(problems, `${path}.${key}`, raw[key], { min, max }, fallback) as number | F;
  const tps = field('tps', 0, 1_000_000, 0);
  if (typeof raw.url !== 'string' || raw.url.trim() === '') {
    problems.add(`${path}.url`, 'required: smpp://system_id:password@host:port, ssmpp://… or simulator');
    return undefined;
  }
  const url = raw.url.trim();
  if (url === 'simulator') {
    problems.unknownKeys(path, raw, [...connectorKeys.common, ...connectorKeys.simulator]);
    let outcomes = parseOutcomes(config.SIM_OUTCOMES);
    if (raw.outcomes !== undefined) {
      // `DELIVRD=97,UNDELIV=3` as SIM_OUTCOMES, or a map of stat to weight.
      const spec =
        typeof raw.outcomes === 'string'
          ? raw.outcomes
          : isObject(raw.outcomes)
            ? Object.entries(raw.outcomes)
                .map(([stat, weight]) => `${stat}=${weight}`)
                .join(',')
            : undefined;
      try {
        if (spec === undefined) throw new Error('must be "STAT=weight,…" or a map of stat to weight');
        outcomes = parseOutcomes(spec);
      } catch (error) {
        problems.add(`${path}.outcomes`, (error as Error).message.replace(/^SIM_OUTCOMES: /, ''));
      }
    }
    return {
      kind: 'simulator',
      name,
      tps,
      dlrDelayMs: field('dlrDelayMs', 0, 86_400_000, config.SIM_DLR_DELAY_MS),
      outcomes,
    };
  }
  problems.unknownKeys(path, raw, [...connectorKeys.common, ...connectorKeys.smpp]);
  const scheme = smppUrl(problems, `${path}.url`, url);
  const bindMode = raw.bindMode ?? 'transceiver';
  if (bindMode !== 'transceiver' && bindMode !== 'transmitter-receiver')
    problems.add(
      `${path}.bindMode`,
      `must be transceiver or transmitter-receiver, got ${JSON.stringify(raw.bindMode)}`,
    );
  if (raw.systemType !== undefined && (typeof raw.systemType !== 'string' || raw.systemType.length > 12))
    problems.add(`${path}.systemType`, `must be a string of at most 12 characters`);
  let tls: SmppConnectorSpec['tls'];
  if (raw.tls !== undefined) {
    if (scheme === 'smpp') problems.add(`${path}.tls`, 'only for ssmpp:// URLs');
    if (!isObject(raw.tls)) problems.add(`${path}.tls`, 'must be an object {caFile, checkServerName}');
    else {
      problems.unknownKeys(`${path}.tls`, raw.tls, ['caFile', 'checkServerName']);
      let caFile: string | undefined;
      if (raw.tls.caFile !== undefined) {
        if (typeof raw.tls.caFile !== 'string' || raw.tls.caFile === '')
          problems.add(`${path}.tls.caFile`, 'must be a file path');
        else {
          // Relative to the connectors file, so the file and its certificates move together.
          caFile = resolve(baseDir, raw.tls.caFile);
          if (!existsSync(caFile)) problems.add(`${path}.tls.caFile`, `no such file: ${caFile}`);
        }
      }
      const check = raw.tls.checkServerName ?? true;
      if (typeof check !== 'boolean')
        problems.add(`${path}.tls.checkServerName`, `must be true or false, got ${JSON.stringify(check)}`);
      tls = { caFile, checkServerName: check !== false };
    }
  }
  return {
    kind: 'smpp',
    name,
    tps,
    url,
    binds: field('binds', 1, 32, 1),
    bindMode: bindMode === 'transmitter-receiver' ? 'transmitter-receiver' : 'transceiver',
    window: field('window', 1, 1000, 10),
    systemType: typeof raw.systemType === 'string' ? raw.systemType : '',
    defaultTon: field('defaultTon', 0, 6, undefined),
    defaultNpi: field('defaultNpi', 0, 18, undefined),
    enquireLinkMs: field('enquireLinkMs', 1000, 3_600_000, config.SMPP_ENQUIRE_LINK_MS),
    responseTimeoutMs: field('responseTimeoutMs', 100, 600_000, config.SMPP_RESPONSE_TIMEOUT_MS),
    bindTimeoutMs: field('bindTimeoutMs', 100, 600_000, config.SMPP_BIND_TIMEOUT_MS),
    tls: scheme === 'ssmpp' ? (tls ?? { checkServerName: true }) : undefined,
  };
}

function readMatch(problems: Problems, path: string, raw: unknown): RouteMatch {
  if (raw === undefined) return {};
  if (!isObject(raw)) {
    problems.add(path, 'must be an object (prefix, country, sender, pushtype, account)');
    return {};
  }
  problems.unknownKeys(path, raw, ['prefix', 'country', 'sender', 'pushtype', 'account']);
  const match: RouteMatch = {};
  const prefix = stringList(problems, `${path}.prefix`, raw.prefix);
  if (prefix) {
    match.prefix = prefix.map((p) => p.replace(/^(\+|00)/, ''));
    match.prefix.forEach((p, i) => {
      if (!/^\d{1,15}$/.test(p))
        problems.add(`${path}.prefix[${i}]`, `must be digits, country code first (336), got "${p}"`);
    });
  }
  const country = stringList(problems, `${path}.country`, raw.country);
  if (country) {
    match.country = country.map((c) => c.toUpperCase());
    match.country.forEach((c, i) => {
      if (!/^[A-Z]{2}$/.test(c) || !isSupportedCountry(c))
        problems.add(`${path}.country[${i}]`, `"${c}" is not an ISO 3166-1 alpha-2 country code`);
    });
  }
  const sender = stringList(problems, `${path}.sender`, raw.sender);
  if (sender) match.sender = sender.map((s) => s.toUpperCase());
  const pushtype = stringList(problems, `${path}.pushtype`, raw.pushtype);
  if (pushtype) {
    pushtype.forEach((p, i) => {
      if (p !== 'alert' && p !== 'marketing')
        problems.add(
          `${path}.pushtype${Array.isArray(raw.pushtype) ? `[${i}]` : ''}`,
          `must be alert or marketing, got "${p}"`,
        );
    });
    match.pushtype = pushtype.filter((p): p is Pushtype => p === 'alert' || p === 'marketing');
  }
  if (raw.account !== undefined) {
    const list = Array.isArray(raw.account) ? raw.account : [raw.account];
    match.account = [];
    list.forEach((a, i) => {
      const id = typeof a === 'string' && /^\d+$/.test(a) ? Number(a) : a;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
        problems.add(
          `${path}.account${Array.isArray(raw.account) ? `[${i}]` : ''}`,
          `must be an account id, got ${JSON.stringify(a)}`,
        );
      else match.account!.push(id);
    });
  }
  return match;
}

function readRoute(
  problems: Problems,
  path: string,
  raw: unknown,
  connectorNames: Set<string>,
): RouteSpec | undefined {
  if (!isObject(raw)) {
    problems.add(path, 'must be an object with name, match, connectors and strategy');
    return undefined;
  }
  problems.unknownKeys(path, raw, ['name', 'match', 'connectors', 'strategy', 'weights']);
  let name = '';
  if (typeof raw.name !== 'string' || !namePattern.test(raw.name))
    problems.add(
      `${path}.name`,
      `must be 1 to 64 letters, digits, "_", "." or "-", got ${JSON.stringify(raw.name)}`,
    );
  else name = raw.name;
  const match = readMatch(problems, `${path}.match`, raw.match);
  const connectors: string[] = [];
  if (!Array.isArray(raw.connectors) || raw.connectors.length === 0) {
    problems.add(`${path}.connectors`, 'must be a non-empty list of connector names');
  } else {
    raw.connectors.forEach((c, i) => {
      if (typeof c !== 'string' || !connectorNames.has(c))
        problems.add(`${path}.connectors[${i}]`, `unknown connector ${JSON.stringify(c)}`);
      else if (connectors.includes(c)) problems.add(`${path}.connectors[${i}]`, `"${c}" is listed twice`);
      else connectors.push(c);
    });
  }
  const strategy = raw.strategy ?? 'failover';
  if (strategy !== 'failover' && strategy !== 'weighted')
    problems.add(`${path}.strategy`, `must be failover or weighted, got ${JSON.stringify(raw.strategy)}`);
  const weights = connectors.map(() => 1);
  if (raw.weights !== undefined) {
    if (strategy !== 'weighted') problems.add(`${path}.weights`, 'only for strategy: weighted');
    const checkWeight = (at: string, w: unknown): number | undefined => {
      if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0 || w > 1_000_000) {
        problems.add(at, `must be a number above 0, got ${JSON.stringify(w)}`);
        return undefined;
      }
      return w;
    };
    if (Array.isArray(raw.weights)) {
      // One per connector, in the order of `connectors`.
      if (Array.isArray(raw.connectors) && raw.weights.length !== raw.connectors.length)
        problems.add(
          `${path}.weights`,
          `has ${raw.weights.length} weights for ${raw.connectors.length} connectors`,
        );
      raw.weights.forEach((w, i) => {
        const weight = checkWeight(`${path}.weights[${i}]`, w);
        if (weight !== undefined && i < weights.length) weights[i] = weight;
      });
    } else if (isObject(raw.weights)) {
      // Keyed by connector name; a connector of the route left out weighs 1.
      for (const [key, w] of Object.entries(raw.weights)) {
        const index = connectors.indexOf(key);
        if (index < 0) problems.add(`${path}.weights.${key}`, `"${key}" is not a connector of this route`);
        const weight = checkWeight(`${path}.weights.${key}`, w);
        if (weight !== undefined && index >= 0) weights[index] = weight;
      }
    } else problems.add(`${path}.weights`, 'must be a list of numbers or a map of connector name to number');
  }
  return {
    name,
    match,
    connectors,
    strategy: strategy === 'weighted' ? 'weighted' : 'failover',
    weights,
  };
}

/** Validates a parsed connectors file; `file` names it in the error. */
export function readRoutingTable(raw: unknown, config: Config, file: string): RoutingTable {
  const problems = new Problems();
  const baseDir = dirname(file);
  const connectors: ConnectorSpec[] = [];
  const routes: RouteSpec[] = [];
  const senderTps = new Map<string, number>();
  let defaultSenderTps = 0;
  if (!isObject(raw)) problems.add('(file)', 'must be a map with connectors and routes');
  else {
    problems.unknownKeys('(file)', raw, ['connectors', 'routes', 'senders', 'defaultSenderTps']);
    if (!Array.isArray(raw.connectors) || raw.connectors.length === 0)
      problems.add('connectors', 'must be a non-empty list');
    else {
      const firstAt = new Map<string, number>();
      raw.connectors.forEach((c, i) => {
        const spec = readConnector(problems, `connectors[${i}]`, c, config, baseDir);
        if (!spec) return;
        const first = firstAt.get(spec.name);
        if (spec.name && first !== undefined)
          problems.add(
            `connectors[${i}].name`,
            `duplicate name "${spec.name}" (already connectors[${first}])`,
          );
        else firstAt.set(spec.name, i);
        connectors.push(spec);
      });
    }
    const names = new Set(connectors.map((c) => c.name).filter((n) => n !== ''));
    if (!Array.isArray(raw.routes) || raw.routes.length === 0)
      problems.add('routes', 'must be a non-empty list (a route without match takes every message)');
    else {
      raw.routes.forEach((r, i) => {
        const route = readRoute(problems, `routes[${i}]`, r, names);
        if (!route) return;
        if (route.name && routes.some((other) => other.name === route.name))
          problems.add(`routes[${i}].name`, `duplicate name "${route.name}"`);
        routes.push(route);
      });
    }
    if (raw.senders !== undefined) {
      if (!isObject(raw.senders)) problems.add('senders', 'must be a map of sender ID to parts per second');
      else {
        for (const [sender, tps] of Object.entries(raw.senders)) {
          const limit = integer(problems, `senders.${sender}`, tps, { min: 1, max: 1_000_000 });
          if (limit !== undefined) senderTps.set(sender.toUpperCase(), limit);
        }
      }
    }
    defaultSenderTps = integer(
      problems,
      'defaultSenderTps',
      raw.defaultSenderTps,
      { min: 0, max: 1_000_000 },
      0,
    );
  }
  if (problems.list.length > 0)
    throw new ConfigError(
      `invalid CONNECTORS_FILE ${file} (${problems.list.length} error${problems.list.length > 1 ? 's' : ''}):\n  ${problems.list.join('\n  ')}`,
    );
  return { connectors, routes, senderTps, defaultSenderTps, file };
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
