// The process's own Prometheus metrics: one prom-client registry per process, every series labelled with the
// process's `role`, and the observers the capabilities are handed (a delivery worker's submits and receipts,
// the SMPP binds, the webhook dispatcher's attempts, the alert jobs, the API's requests). Observers are plain
// objects of functions, so the instrumented code knows nothing of prom-client; each call is a counter
// increment or a histogram observation, cheap enough for the send path.
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { PoolUse } from '../store/db.ts';
import { type CounterSeries, FastCounter, FastHistogram, type HistogramSeries } from './instruments.ts';

/**
 * The connector of SMPP_URL (or TRANSPORT=simulator) without a connectors file, and of an outcome or receipt
 * that names none.
 */
export const defaultConnector = 'default';

/**
 * A submit's outcome as the transport reports it (the delivery worker's SubmitOutcome, structurally), with the
 * connector that carried it when a router over several connectors set it.
 */
export type SubmitOutcomeLike = { connector?: string } & (
  | { ok: true; smscId: string }
  | { ok: false; retry: boolean }
);

/** What the SMPP transport reports of its binds, read at each scrape. */
export interface TransportUsage {
  bindsUp: number;
  binds: number;
  windowInUse: number;
  windowSize: number;
}

/** One SMPP connector's binds and window, by its name. */
export interface ConnectorUsage extends TransportUsage {
  connector: string;
}

/** Delivery receipts remembered for their latency: more than a few minutes' worth at full speed is no use. */
const maxAwaitedReceipts = 100_000;

/** HTTP latency buckets, seconds: the send path answers in milliseconds, large sends in seconds. */
const httpBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** submit_sm to submit_sm_resp, seconds. */
const submitBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** submit_sm to its final receipt, seconds: a second for the simulator, minutes to hours for handsets off. */
const receiptBuckets = [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 72 * 3600];

export type ProcessMetrics = ReturnType<typeof createProcessMetrics>;

/**
 * The registry of one process and its observers. `idForms` gives the spellings of an SMSC message id (hex or
 * decimal), so a receipt finds the submit it answers whichever spelling the SMSC used for each.
 */
export function createProcessMetrics(options: { role: string; idForms: (id: string) => string[] }) {
  const registry = new Registry();
  registry.setDefaultLabels({ role: options.role });
  const registers = [registry];

  const counter = (name: string, help: string) => new FastCounter(name, help, registry);
  const histogram = (name: string, help: string, buckets: readonly number[]) =>
    new FastHistogram(name, help, buckets, registry);

  const httpRequests = counter(
    'http_requests_total',
    'HTTP requests answered by the API, by route pattern, method and status code.',
  );
  const httpDuration = histogram(
    'http_request_duration_seconds',
    'Time from receiving an API request to the end of its answer, by route pattern, method and status code.',
    httpBuckets,
  );

  const sendsAccepted = counter(
    'pigeon_sends_accepted_total',
    'Campaign sends accepted (POST /send, GET /send, POST /send/lists), committed with their messages.',
  ).with({});
  const messagesAccepted = counter(
    'pigeon_messages_accepted_total',
    'Messages queued by the accepted campaign sends.',
  ).with({});

  const submits = counter(
    'pigeon_delivery_submits_total',
    'SMS parts handed to the transport, by outcome: accepted by the SMSC, to retry later, or refused for good.',
  );
  const submitDuration = histogram(
    'pigeon_delivery_submit_duration_seconds',
    'From handing a part to the transport to the SMSC answer (submit_sm_resp), including any wait for a window slot or the TPS budget.',
    submitBuckets,
  );
  const receiptDelay = histogram(
    'pigeon_delivery_receipt_delay_seconds',
    'From the SMSC accepting a part to its final delivery receipt, for parts submitted by this process.',
    receiptBuckets,
  );
  const receipts = counter(
    'pigeon_delivery_receipts_total',
    'Delivery receipts received from the carrier, final or not.',
  );

  const throttled = counter(
    'pigeon_smpp_throttled_total',
    'Submits the SMSC answered with ESME_RTHROTTLED or ESME_RMSGQFUL (the bind then pauses).',
  );
  const reconnects = counter(
    'pigeon_smpp_reconnects_total',
    'SMPP connections lost or refused, each followed by a reconnection after a backoff.',
  );
  let transportUsage: (() => ConnectorUsage[]) | undefined;
  const usageGauge = (name: string, help: string, pick: (usage: TransportUsage) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['connector'] as const,
      registers,
      collect() {
        // Absent until an SMPP transport runs in this process: the simulator has no binds.
        if (!transportUsage) return;
        this.reset();
        for (const usage of transportUsage()) this.set({ connector: usage.connector }, pick(usage));
      },
    });
  usageGauge('pigeon_smpp_binds_up', 'SMPP binds connected and bound now.', (u) => u.bindsUp);
  usageGauge(
    'pigeon_smpp_binds',
    'SMPP binds configured (SMPP_BINDS; a transmitter and a receiver count as two).',
    (u) => u.binds,
  );
  usageGauge(
    'pigeon_smpp_window_in_use',
    'submit_sm sent and not yet answered, over every bind.',
    (u) => u.windowInUse,
  );
  usageGauge(
    'pigeon_smpp_window_size',
    'submit_sm that may be in flight at once over every bind (SMPP_BINDS x SMPP_WINDOW).',
    (u) => u.windowSize,
  );

  let poolUse: (() => PoolUse) | undefined;
  const poolGauge = (name: string, help: string, pick: (use: PoolUse) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        if (poolUse) this.set(pick(poolUse()));
      },
    });
  poolGauge(
    'pigeon_db_pool_max_connections',
    "This process's database connections at most (PG_POOL_SIZE; 1 for SQLite).",
    (u) => u.max,
  );
  poolGauge('pigeon_db_pool_open_connections', 'Database connections open in this process.', (u) => u.open);
  poolGauge(
    'pigeon_db_pool_idle_connections',
    'Database connections open and idle in this process (PostgreSQL).',
    (u) => u.idle,
  );
  poolGauge(
    'pigeon_db_pool_waiting_queries',
    'Queries of this process waiting for a free database connection (PostgreSQL).',
    (u) => u.waiting,
  );

  const webhookDeliveries = counter(
    'pigeon_webhook_deliveries_total',
    'Webhook delivery attempts by outcome: success (2xx), retry (failed, tried again later), failed (failed and the schedule is spent).',
  );
  const alertJobs = counter(
    'pigeon_alert_jobs_total',
    'Balance alert jobs run, by kind (email, sms) and outcome: sent (e-mail sent or SMS queued), retry, failed.',
  );

  // Series found once per connector: the hot paths only add to them.
  const connectorSeries = (name: string) => {
    const connector = { connector: name };
    return {
      submitAccepted: submits.with({ ...connector, outcome: 'accepted' }),
      submitRetry: submits.with({ ...connector, outcome: 'retry' }),
      submitRefused: submits.with({ ...connector, outcome: 'refused' }),
      submitTimer: submitDuration.with(connector),
      receiptTimer: receiptDelay.with(connector),
      receiptCount: receipts.with(connector),
      throttledCount: throttled.with(connector),
      reconnectCount: reconnects.with(connector),
    };
  };
  const defaultSeries = connectorSeries(defaultConnector);
  /** The series of each connector named so far; connectors are few (a configuration file's list). */
  const seriesByConnector = new Map([[defaultConnector, defaultSeries]]);
  const seriesOf = (name: string | undefined) => {
    if (name === undefined || name === defaultConnector) return defaultSeries;
    let series = seriesByConnector.get(name);
    if (!series) {
      series = connectorSeries(name);
      seriesByConnector.set(name, series);
    }
    return series;
  };

  /** When each part awaiting its receipt was accepted (ms, monotonic), by SMSC id, oldest first. */
  const awaited = new Map<string, number>();
  /** The HTTP series by route, method and status code, in one string. */
  const httpSeries = new Map<string, { count: CounterSeries; duration: HistogramSeries }>();

  return {
    registry,

    /** Event-loop lag, heap, GC, CPU, file descriptors: prom-client's default process metrics, once. */
    collectProcessMetrics(): void {
      collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
    },

    /** The database connection pool's use, read at each scrape. */
    watchPool(use: () => PoolUse): void {
      poolUse = use;
    },

    /** The SMPP connectors' binds and window, one series per connector, read at each scrape. */
    watchTransport(usage: () => ConnectorUsage[]): void {
      transportUsage = usage;
    },

    http: {
      answered(route: string, method: string, statusCode: number, seconds: number): void {
        const key = `${route} ${method} ${statusCode}`;
        let series = httpSeries.get(key);
        if (!series) {
          const labels = { route, method, status_code: String(statusCode) };
          series = { count: httpRequests.with(labels), duration: httpDuration.with(labels) };
          httpSeries.set(key, series);
        }
        series.count.value++;
        series.duration.observe(seconds);
      },
    },

    sends: {
      accepted(messages: number): void {
        sendsAccepted.value++;
        messagesAccepted.value += messages;
      },
    },

    delivery: {
      submitted(outcome: SubmitOutcomeLike, seconds: number): void {
        const series = seriesOf(outcome.connector);
        series.submitTimer.observe(seconds);
        if (outcome.ok) {
          series.submitAccepted.value++;
          if (awaited.size >= maxAwaitedReceipts) awaited.delete(awaited.keys().next().value as string);
          awaited.set(outcome.smscId, performance.now());
        } else if (outcome.retry) series.submitRetry.value++;
        else series.submitRefused.value++;
      },
      /** `connector`: the one it came in on, when a router over several connectors set it. */
      receipt(receipt: { smscId: string; stat: string; connector?: string }): void {
        const series = seriesOf(receipt.connector);
        series.receiptCount.value++;
        if (receipt.stat === 'ENROUTE' || receipt.stat === 'ACCEPTD' || awaited.size === 0) return;
        // The spelling of the submit's answer first: the other spellings only when the SMSC changed it.
        let id = receipt.smscId;
        let at = awaited.get(id);
        if (at === undefined) {
          id = options.idForms(receipt.smscId).find((form) => awaited.has(form)) ?? id;
          at = awaited.get(id);
        }
        if (at === undefined) return;
        awaited.delete(id);
        series.receiptTimer.observe((performance.now() - at) / 1000);
      },
    },

    /** Each SMPP transport names its connector (`default` when it has no name). */
    smpp: {
      throttled(connector?: string): void {
        seriesOf(connector).throttledCount.value++;
      },
      reconnecting(connector?: string): void {
        seriesOf(connector).reconnectCount.value++;
      },
    },

    webhooks: {
      attempted(outcome: 'success' | 'retry' | 'failed'): void {
        webhookDeliveries.with({ outcome }).value++;
      },
    },

    alerts: {
      ran(kind: string, outcome: 'sent' | 'retry' | 'failed'): void {
        alertJobs.with({ kind: kind === 'email' || kind === 'sms' ? kind : 'other', outcome }).value++;
      },
    },
  };
}
