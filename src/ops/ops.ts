// What an operator asks a process: is it up (GET /health), can it work (GET /ready), and its Prometheus
// metrics (GET /metrics). Served outside authentication on the API's port, or, with METRICS_PORT, on a port
// of their own by a small node:http server (how a worker process without the API exposes them). A process
// started by the supervisor answers for every process of the server: it asks the others through the
// supervisor (supervision.ts) and merges their series, which their `role` label keeps apart.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config.ts';
import type { App } from '../http/types.ts';
import type { Log } from '../shared/log.ts';
import type { PoolUse } from '../store/db.ts';
import { createDatabaseMetrics, type DatabaseSources } from './database-metrics.ts';
import {
  type ConnectorUsage,
  createProcessMetrics,
  defaultConnector,
  type ProcessMetrics,
  type TransportUsage,
} from './metrics.ts';
import { healthSchema, metricsSchema, readySchema } from './ops.schemas.ts';
import { type Checks, createReadinessCheck, type TransportState } from './readiness.ts';
import { createSupervisorLink, type MetricsJson } from './supervision.ts';

export type OpsConfig = Pick<Config, 'ROLE' | 'METRICS' | 'METRICS_PORT' | 'METRICS_TOKEN'>;

/** One answer of /health, /ready or /metrics, whichever server sends it. */
export interface OpsAnswer {
  httpCode: number;
  contentType: string;
  headers?: Record<string, string>;
  body: string;
}

export type Ops = ReturnType<typeof createOps>;

const json = (httpCode: number, body: object, headers?: Record<string, string>): OpsAnswer => ({
  httpCode,
  contentType: 'application/json; charset=utf-8',
  headers,
  body: JSON.stringify(body),
});

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The failing checks in one sentence: `database: not answering; delivery: transport: no SMPP bind is up`. */
const failing = (checks: Checks) =>
  Object.entries(checks)
    .filter(([, value]) => value !== 'ok')
    .map(([name, value]) => `${name}: ${value}`)
    .join('; ');

/**
 * prom-client writes a NaN value (the mean of prom-client's event-loop histogram before its first sample)
 * as `Nan`; the exposition format spells it `NaN`, and a strict scraper refuses anything else.
 */
const spellNaN = (text: string) => text.replace(/ Nan$/gm, ' NaN');

export function createOps(deps: {
  config: OpsConfig;
  log: Log;
  now: () => number;
  /** The applied migrations' names, read from the database, and those this version knows. */
  appliedMigrations: () => Promise<string[]>;
  knownMigrations: readonly string[];
  /** The database gauges' reads, each through its capability's service. */
  sources: DatabaseSources;
  pool: () => PoolUse;
  /** Spellings of an SMSC message id (hex, decimal), to time receipts whichever one the SMSC uses. */
  smscIdForms: (id: string) => string[];
}) {
  const { config, log } = deps;
  const metrics: ProcessMetrics | undefined =
    config.METRICS === 'on'
      ? createProcessMetrics({ role: config.ROLE, idForms: deps.smscIdForms })
      : undefined;
  metrics?.watchPool(deps.pool);
  const database = metrics ? createDatabaseMetrics({ sources: deps.sources, now: deps.now, log }) : undefined;
  const readiness = createReadinessCheck({
    applied: deps.appliedMigrations,
    known: deps.knownMigrations,
    log,
  });
  const expectedToken = config.METRICS_TOKEN === undefined ? undefined : digest(config.METRICS_TOKEN);
  let supervisor: ReturnType<typeof createSupervisorLink> | undefined;
  let processMetricsOn = false;

  const ownMetricsJson = (): Promise<MetricsJson> =>
    metrics ? (metrics.registry.getMetricsAsJSON() as unknown as Promise<MetricsJson>) : Promise.resolve([]);

  async function metricsText(): Promise<string> {
    return spellNaN(await exposition());
  }

  async function exposition(): Promise<string> {
    if (!metrics || !database) return '';
    const shown = await database.refresh();
    if (!supervisor) {
      const texts = await Promise.all([metrics.registry, ...shown].map((registry) => registry.metrics()));
      return texts.join('\n');
    }
    const [own, gathered, ...fromDatabase] = await Promise.all([
      ownMetricsJson(),
      supervisor.gather('metrics'),
      ...shown.map((registry) => registry.getMetricsAsJSON() as unknown as Promise<MetricsJson>),
    ]);
    const all: MetricsJson[] = [own, ...fromDatabase];
    if (gathered) {
      all.push(gathered.metrics);
      for (const process of gathered.processes) if (process.metrics) all.push(process.metrics);
    } else {
      log.warn({}, 'metrics: the supervisor did not answer; only this process is shown');
    }
    // Series of distinct processes differ by `role`, so aggregation never adds two together; only the
    // `omit` aggregator (process_start_time_seconds) would drop them, so each keeps its own value.
    for (const list of all)
      for (const metric of list) {
        if (metric.aggregator === 'omit') metric.aggregator = 'first';
        // JSON carried a NaN (an empty histogram's mean) over IPC as null, which would be written +Inf.
        for (const sample of metric.values) if (sample.value === null) sample.value = Number.NaN;
      }
    return AggregatorRegistry.aggregate(
      all as unknown as Parameters<typeof AggregatorRegistry.aggregate>[0],
    ).metrics();
  }

  function health(): OpsAnswer {
    return json(200, { status: 1, message: 'OK' });
  }

  async function ready(): Promise<OpsAnswer> {
    const [own, gathered] = await Promise.all([readiness.check(), supervisor?.gather('ready')]);
    const checks: Checks = { ...own.checks };
    if (supervisor) {
      if (!gathered) checks.processes = 'the supervisor did not answer';
      for (const process of gathered?.processes ?? []) {
        const answer = process.readiness;
        checks[process.role] =
          process.missing ??
          (answer === undefined ? 'no answer' : answer.ready ? 'ok' : failing(answer.checks));
      }
    }
    const details = failing(checks);
    if (details === '') return json(200, { status: 1, message: 'OK', checks });
    return json(503, { status: -99, message: 'Not ready', details, checks });
  }

  /** The metrics, given the request's Authorization header (checked against METRICS_TOKEN when set). */
  async function metricsAnswer(authorization: string | undefined): Promise<OpsAnswer> {
    if (expectedToken) {
      const given = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
      // Digests of equal length, compared in constant time: the token's length does not leak either.
      if (!timingSafeEqual(digest(given), expectedToken)) {
        return json(
          401,
          {
            status: -1,
            message: 'Authentication error',
            details: 'GET /metrics needs the header Authorization: Bearer <METRICS_TOKEN>',
          },
          { 'www-authenticate': 'Bearer' },
        );
      }
    }
    return {
      httpCode: 200,
      contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
      body: await metricsText(),
    };
  }

  return {
    /** The observers handed to the capabilities; undefined with METRICS=off. */
    metrics,

    /** Event-loop lag, heap, GC and the rest of prom-client's process metrics: a running server, once. */
    startProcessMetrics(): void {
      if (!metrics || processMetricsOn) return;
      processMetricsOn = true;
      metrics.collectProcessMetrics();
    },

    /**
     * The delivery transport: part of readiness from now on, and the binds and window of its SMPP connectors
     * in the metrics: `connectors` when given (a router's several), else the transport's own `usage`, under
     * the connector name it reports (`default` without one).
     */
    watchTransport(
      transport: TransportState & { usage?(): TransportUsage & { connector?: string } },
      connectors?: () => ConnectorUsage[],
    ): void {
      readiness.watchTransport(transport);
      if (!metrics) return;
      if (connectors) {
        metrics.watchTransport(connectors);
        return;
      }
      const { usage } = transport;
      if (usage)
        metrics.watchTransport(() => {
          const own = usage.call(transport);
          return [{ ...own, connector: own.connector ?? defaultConnector }];
        });
    },

    /**
     * This process runs under the supervisor (through `channel`): it answers the supervisor's questions, and
     * its /metrics and /ready answer for every process of the server.
     */
    superviseThrough(channel: NodeJS.Process): void {
      supervisor = createSupervisorLink(channel, {
        metrics: ownMetricsJson,
        readiness: () => readiness.check(),
      });
    },

    health,
    ready,
    metricsAnswer,

    /**
     * On the API: the HTTP metrics hook, and /health, /ready and /metrics unless METRICS_PORT serves them.
     * Registered before the authenticated routes, outside their scope.
     */
    register(app: App): void {
      if (metrics) {
        const { http } = metrics;
        app.addHook('onResponse', (request, reply, done) => {
          // The route's pattern (`/campaign/:ticket`), never the URL: the label set stays bounded.
          http.answered(
            request.routeOptions.url ?? 'unmatched',
            request.method,
            reply.statusCode,
            reply.elapsedTime / 1000,
          );
          done();
        });
      }
      if (config.METRICS_PORT !== undefined) return;
      const send = (answer: OpsAnswer, reply: import('fastify').FastifyReply) =>
        reply
          .code(answer.httpCode)
          .headers(answer.headers ?? {})
          .type(answer.contentType)
          .send(answer.body);
      // Described in /openapi.json (ops.schemas.ts); their answers are text already, which no schema rewrites.
      // Declared in a plugin, loaded after the API docs' plugin, which sees only the routes declared after it.
      app.register(async (scoped: App) => {
        scoped.get('/health', { schema: healthSchema }, (_request, reply) => send(health(), reply));
        scoped.get('/ready', { schema: readySchema }, async (_request, reply) => send(await ready(), reply));
        if (metrics) {
          scoped.get('/metrics', { schema: metricsSchema }, async (request, reply) =>
            send(await metricsAnswer(request.headers.authorization), reply),
          );
        }
      });
    },

    /** Serves /health, /ready and /metrics on a port of their own (METRICS_PORT); answers its URL. */
    async listen(host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
      const routes: Record<string, (authorization: string | undefined) => OpsAnswer | Promise<OpsAnswer>> = {
        '/health': () => health(),
        '/ready': () => ready(),
        ...(metrics ? { '/metrics': (authorization) => metricsAnswer(authorization) } : {}),
      };
      const server: Server = createServer((request, response) => {
        const path = (request.url ?? '/').split('?')[0];
        const route = routes[path];
        const answer: Promise<OpsAnswer> =
          request.method !== 'GET' && request.method !== 'HEAD'
            ? Promise.resolve(
                json(
                  405,
                  { status: -7, message: 'Data error', details: `${path} answers GET only` },
                  { allow: 'GET' },
                ),
              )
            : route
              ? Promise.resolve(route(request.headers.authorization))
              : Promise.resolve(
                  json(200, {
                    status: -5,
                    message: 'Not found',
                    details: `no endpoint ${request.method} ${path}`,
                  }),
                );
        // Nothing is read from the request body: it is drained so the connection can be reused.
        request.resume();
        answer
          .catch((error: unknown) => {
            log.warn({ err: error }, 'operations endpoint failed');
            return json(500, {
              status: -99,
              message: 'Unknown error',
              details: 'internal error; it has been logged',
            });
          })
          .then((a) => {
            response.writeHead(a.httpCode, {
              'content-type': a.contentType,
              'content-length': Buffer.byteLength(a.body),
              ...a.headers,
            });
            response.end(request.method === 'HEAD' ? undefined : a.body);
          });
      });
      // An idle scraper's connection is closed rather than kept: nothing here is worth holding a socket for.
      server.keepAliveTimeout = 5_000;
      server.requestTimeout = 10_000;
      server.headersTimeout = 10_000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      return {
        url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
        close: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      };
    },
  };
}
