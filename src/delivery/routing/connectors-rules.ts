// What the connectors file's schema cannot say, checked after it and listed with its errors: names given
// twice, a route's connectors missing from the file, keys of the other kind of connector, an smpp:// URL's
// parts, the TLS CA file, the simulator's outcomes, country codes and weights that do not fit their route.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isSupportedCountry } from 'libphonenumber-js/max';
import { parseOutcomes, type SimulatedOutcome } from '../simulator/simulator-transport.ts';
import { simulatorKeys, smppKeys } from './connectors-schema.ts';

type Raw = Record<string, unknown>;

const isObject = (value: unknown): value is Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A simulator's outcomes: `DELIVRD=97,UNDELIV=3` as SIM_OUTCOMES, or a map of stat to weight; throws naming what is wrong. */
export function outcomesOf(spec: string | Record<string, number>): SimulatedOutcome[] {
  const text =
    typeof spec === 'string'
      ? spec
      : Object.entries(spec)
          .map(([stat, weight]) => `${stat}=${weight}`)
          .join(',');
  return parseOutcomes(text);
}

/** Checks `smpp://user:pass@host:port` and `ssmpp://…`; undefined when it is neither (the error is added). */
function smppUrl(
  add: (path: string, message: string) => void,
  path: string,
  value: string,
): 'smpp' | 'ssmpp' | undefined {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    add(path, `"${value}" is not a URL (smpp://system_id:password@host:port, ssmpp://… or simulator)`);
    return undefined;
  }
  const scheme = parsed.protocol.slice(0, -1);
  if (scheme !== 'smpp' && scheme !== 'ssmpp') {
    add(path, `scheme must be smpp, ssmpp or the word simulator, got "${scheme}"`);
    return undefined;
  }
  if (!parsed.hostname) add(path, 'has no host');
  if (!parsed.username) add(path, 'has no system_id (smpp://system_id:password@host:port)');
  if ((parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search || parsed.hash)
    add(path, 'must end after host:port (no path, query or fragment)');
  return scheme;
}

/**
 * What the schema cannot say, each error with its path: names given twice, a route's connectors that are not
 * in the file, keys of the other kind of connector, an smpp:// URL's parts, the TLS CA file, the simulator's
 * outcomes, country codes and weights that do not fit their route. `value` is the file after the schema's
 * conversions and defaults, which may still be wrong anywhere; `given` is the file as written.
 */
export function crossFieldErrors(value: unknown, given: unknown, baseDir: string): string[] {
  const errors: string[] = [];
  const add = (path: string, message: string) => errors.push(`${path}: ${message}`);
  if (!isObject(value) || !isObject(given)) return errors;
  const connectorNames = new Set<string>();
  const firstAt = new Map<string, number>();
  listOf(value.connectors).forEach((connector, i) => {
    const written = listOf(given.connectors)[i];
    if (!isObject(connector) || !isObject(written)) return;
    const at = `connectors[${i}]`;
    if (typeof connector.name === 'string') {
      const first = firstAt.get(connector.name);
      if (first !== undefined)
        add(`${at}.name`, `duplicate name "${connector.name}" (already connectors[${first}])`);
      else firstAt.set(connector.name, i);
      connectorNames.add(connector.name);
    }
    // An empty URL is the schema's to name.
    if (typeof connector.url !== 'string' || connector.url === '') return;
    const url = connector.url.trim();
    const simulator = url === 'simulator';
    // The schema's defaults fill both kinds' keys: only those written count.
    for (const key of Object.keys(written)) {
      if (simulator && smppKeys.includes(key))
        add(`${at}.${key}`, 'unknown key (only for smpp:// and ssmpp:// URLs)');
      else if (!simulator && simulatorKeys.includes(key))
        add(`${at}.${key}`, 'unknown key (only for url: simulator)');
    }
    if (simulator) {
      const outcomes = connector.outcomes;
      if (typeof outcomes === 'string' || isObject(outcomes)) {
        try {
          outcomesOf(outcomes as string | Record<string, number>);
        } catch (error) {
          add(`${at}.outcomes`, (error as Error).message.replace(/^SIM_OUTCOMES: /, ''));
        }
      }
      return;
    }
    const scheme = smppUrl(add, `${at}.url`, url);
    const tls = connector.tls;
    if (written.tls !== undefined && scheme === 'smpp') add(`${at}.tls`, 'only for ssmpp:// URLs');
    if (isObject(tls) && typeof tls.caFile === 'string' && tls.caFile !== '') {
      // Relative to the connectors file, so the file and its certificates move together.
      const caFile = resolve(baseDir, tls.caFile);
      if (!existsSync(caFile)) add(`${at}.tls.caFile`, `no such file: ${caFile}`);
    }
  });
  const routeNames = new Set<string>();
  listOf(value.routes).forEach((route, i) => {
    if (!isObject(route)) return;
    const at = `routes[${i}]`;
    if (typeof route.name === 'string') {
      if (routeNames.has(route.name)) add(`${at}.name`, `duplicate name "${route.name}"`);
      routeNames.add(route.name);
    }
    if (isObject(route.match)) {
      listOf(route.match.country).forEach((country, j) => {
        if (typeof country !== 'string' || !/^\s*[A-Za-z]{2}\s*$/.test(country)) return;
        const code = country.trim().toUpperCase();
        if (!isSupportedCountry(code))
          add(`${at}.match.country[${j}]`, `"${code}" is not an ISO 3166-1 alpha-2 country code`);
      });
    }
    const connectors: string[] = [];
    listOf(route.connectors).forEach((c, j) => {
      if (typeof c !== 'string') return;
      if (!connectorNames.has(c)) add(`${at}.connectors[${j}]`, `unknown connector ${JSON.stringify(c)}`);
      else if (connectors.includes(c)) add(`${at}.connectors[${j}]`, `"${c}" is listed twice`);
      else connectors.push(c);
    });
    const weights = route.weights;
    if (weights === undefined) return;
    if (route.strategy !== 'weighted') add(`${at}.weights`, 'only for strategy: weighted');
    if (Array.isArray(weights)) {
      // One per connector, in the order of `connectors`.
      if (Array.isArray(route.connectors) && weights.length !== route.connectors.length)
        add(`${at}.weights`, `has ${weights.length} weights for ${route.connectors.length} connectors`);
    } else if (isObject(weights)) {
      for (const key of Object.keys(weights)) {
        if (!connectors.includes(key))
          add(`${at}.weights.${key}`, `"${key}" is not a connector of this route`);
      }
    }
  });
  return errors;
}
