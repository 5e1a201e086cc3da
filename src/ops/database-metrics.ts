// Gauges read from the database when /metrics is scraped: messages by state, the webhook backlog and the
// click fold's lag. They describe the database, not a process, so they carry no `role` and only the process
// that answers the scrape reads them, once per scrape (concurrent scrapes share one read). Each read goes
// through the owning capability's service, wired in deps.ts; none is a full table scan (see each source).
import { Gauge, Registry } from 'prom-client';

/** Messages per state of the delivery capability (`messages.state`), queued split by whether it is due. */
export interface MessageStateCounts {
  /** Queued and due later (scheduled, or waiting to retry). */
  queued: number;
  /** Queued and due now: waiting for a delivery worker. */
  due: number;
  /** Leased by a delivery worker (`sending`). */
  sending: number;
  /** Accepted by the SMSC, receipt awaited (`submitted`). */
  submitted: number;
  /** Held while their account is locked. */
  held: number;
  /** Final states, among the messages due since `finishedSince`. */
  delivered: number;
  failed: number;
  expired: number;
}

export interface WebhookBacklog {
  /** Pending deliveries due now. */
  due: number;
  /** Pending deliveries waiting for their next attempt (after a failure). */
  retrying: number;
  /** Deliveries leased by a dispatcher. */
  sending: number;
  /** Events written and not yet turned into deliveries. */
  eventsWaiting: number;
  /** When the oldest pending delivery or waiting event was created (ms), null when there is none. */
  oldestPendingAt: number | null;
  /** The earliest `next_attempt_at` of a pending delivery (ms), null when there is none. */
  firstAttemptAt: number | null;
}

/** The reads, each one query through its capability's service. */
export interface DatabaseSources {
  messageStates(now: number, finishedSince: number): Promise<MessageStateCounts>;
  webhookBacklog(now: number): Promise<WebhookBacklog>;
  /** When the oldest click the fold has not counted yet was stored (ms), null when it is up to date. */
  oldestUnfoldedClickAt(): Promise<number | null>;
}

/**
 * Final states are counted over the messages due in the last hour: counting every message ever delivered
 * would read the whole table (100 ms for a million rows on SQLite, on the API's event loop) at each scrape.
 */
export const finishedWindowMs = 3_600_000;

/** A scrape's database reads that take longer than this are given up, and the gauges left out. */
export const databaseReadTimeoutMs = 2_000;

export type DatabaseMetrics = ReturnType<typeof createDatabaseMetrics>;

export function createDatabaseMetrics(deps: {
  sources: DatabaseSources;
  now: () => number;
  log: { warn(obj: object, msg: string): void };
}) {
  const { sources, now, log } = deps;
  // The gauges, and apart from them the one that says whether they could be read: a scrape whose reads
  // failed shows only the latter, since a zero would read as an empty queue.
  const registry = new Registry();
  const statusRegistry = new Registry();
  const registers = [registry];
  const messages = new Gauge({
    name: 'pigeon_messages',
    help: 'Messages in the database by state, read at the scrape: queued (due later), due (waiting for a worker), in_flight (being submitted), sent (receipt awaited), held (account locked); delivered, failed and expired count the messages due in the last hour.',
    labelNames: ['state'] as const,
    registers,
  });
  const webhookDeliveries = new Gauge({
    name: 'pigeon_webhook_backlog',
    help: 'Webhook work waiting, read at the scrape: events not yet fanned out, deliveries due now, retrying (waiting for their next attempt), in_flight.',
    labelNames: ['state'] as const,
    registers,
  });
  const oldestPending = new Gauge({
    name: 'pigeon_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest webhook delivery still pending (retries included) or event not yet fanned out; 0 when none.',
    registers,
  });
  const overdue = new Gauge({
    name: 'pigeon_webhook_overdue_seconds',
    help: 'How long the most overdue webhook work has waited past its due time (a pending delivery past its next attempt, or an event not yet fanned out since it was written); 0 when none is due.',
    registers,
  });
  const foldLag = new Gauge({
    name: 'pigeon_click_fold_lag_seconds',
    help: 'Age of the oldest stored click not yet counted by the click fold; 0 when it is up to date.',
    registers,
  });
  const databaseUp = new Gauge({
    name: 'pigeon_database_up',
    help: `1 when the database answered this scrape's reads, 0 when they failed or took over ${databaseReadTimeoutMs / 1000} s (the database gauges are then left out).`,
    registers: [statusRegistry],
  });

  const seconds = (ms: number) => Math.max(0, ms) / 1000;
  let failing = false;

  async function read(): Promise<void> {
    const at = now();
    const [states, backlog, oldestClick] = await Promise.all([
      sources.messageStates(at, at - finishedWindowMs),
      sources.webhookBacklog(at),
      sources.oldestUnfoldedClickAt(),
    ]);
    messages.set({ state: 'queued' }, states.queued);
    messages.set({ state: 'due' }, states.due);
    messages.set({ state: 'in_flight' }, states.sending);
    messages.set({ state: 'sent' }, states.submitted);
    messages.set({ state: 'held' }, states.held);
    messages.set({ state: 'delivered' }, states.delivered);
    messages.set({ state: 'failed' }, states.failed);
    messages.set({ state: 'expired' }, states.expired);
    webhookDeliveries.set({ state: 'events' }, backlog.eventsWaiting);
    webhookDeliveries.set({ state: 'due' }, backlog.due);
    webhookDeliveries.set({ state: 'retrying' }, backlog.retrying);
    webhookDeliveries.set({ state: 'in_flight' }, backlog.sending);
    oldestPending.set(backlog.oldestPendingAt === null ? 0 : seconds(at - backlog.oldestPendingAt));
    overdue.set(backlog.firstAttemptAt === null ? 0 : seconds(at - backlog.firstAttemptAt));
    foldLag.set(oldestClick === null ? 0 : seconds(at - oldestClick));
  }

  let reading: Promise<Registry[]> | undefined;

  /**
   * Reads every gauge (or shares the read under way) and answers the registries to show: the gauges and
   * `pigeon_database_up` 1, or on failure or timeout `pigeon_database_up` 0 alone.
   */
  function refresh(): Promise<Registry[]> {
    reading ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          read(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no answer within ${databaseReadTimeoutMs} ms`)),
              databaseReadTimeoutMs,
            );
          }),
        ]);
        databaseUp.set(1);
        if (failing) log.warn({}, 'metrics: the database answers the scrape again');
        failing = false;
        return [registry, statusRegistry];
      } catch (error) {
        databaseUp.set(0);
        if (!failing) log.warn({ err: error }, 'metrics: the database gauges could not be read');
        failing = true;
        return [statusRegistry];
      } finally {
        clearTimeout(timer);
        reading = undefined;
      }
    })();
    return reading;
  }

  return { refresh };
}
