// What each connector (an SMSC link or a simulator) says of itself, for `pigeon connectors`: binds up, state,
// window in use, recent parts per second, last error. The CLI runs in another process than the delivery
// worker, so the delivery process publishes these to the `connector_status` table: one small upsert per
// connector every few seconds and when a state changes, never one per message.
import { hostname } from 'node:os';
import type { Log } from '../shared/log.ts';

/** `bound`: a bind can submit; `connecting`: none yet, none failed; `down`: none, the last attempt failed. */
export type ConnectorState = 'bound' | 'connecting' | 'down';

export interface ConnectorStatus {
  /** The connector's name (`default` for the one of SMPP_URL or TRANSPORT=simulator). */
  name: string;
  kind: 'smpp' | 'simulator';
  /** Connections bound now and configured, over every bind (a transmitter and a receiver count as two). */
  bindsUp: number;
  bindsTotal: number;
  state: ConnectorState;
  /** submit_sm sent and not yet answered, and how many may be at once (transmitting binds × window). */
  windowInUse: number;
  windowSize: number;
  /** Parts accepted per second over the last ten seconds. */
  pps: number;
  lastError: string | null;
  /** When the last error happened (ms since the epoch), null when none did. */
  lastErrorAt: number | null;
}

/** A transport that reports its status: SmppTransport and SimulatorTransport. */
export interface ReportsStatus {
  status(): ConnectorStatus;
}

const hasStatus = (value: unknown): value is ReportsStatus =>
  typeof (value as Partial<ReportsStatus> | null)?.status === 'function';

/**
 * The connectors behind a transport: a router's (its `connectors`, transports or entries holding one in
 * `transport` with its name in `spec.name`, which then names the status), else the transport itself.
 */
export function connectorsOf(transport: unknown): ReportsStatus[] {
  const inner = (transport as { connectors?: unknown } | null)?.connectors;
  if (!Array.isArray(inner)) return hasStatus(transport) ? [transport] : [];
  const found: ReportsStatus[] = [];
  for (const entry of inner) {
    if (hasStatus(entry)) {
      found.push(entry);
      continue;
    }
    const { transport: held, spec } = (entry ?? {}) as { transport?: unknown; spec?: { name?: unknown } };
    if (!hasStatus(held)) continue;
    const name = spec?.name;
    found.push(typeof name === 'string' ? { status: () => ({ ...held.status(), name }) } : held);
  }
  return found;
}

/** The binds and window of each SMPP connector behind a transport, for the metrics' `connector` label. */
export function connectorUsage(transport: unknown) {
  const connectors = connectorsOf(transport);
  return () =>
    connectors
      .map((c) => c.status())
      .filter((s) => s.kind === 'smpp')
      .map((s) => ({
        connector: s.name,
        bindsUp: s.bindsUp,
        binds: s.bindsTotal,
        windowInUse: s.windowInUse,
        windowSize: s.windowSize,
      }));
}

/** Seconds counted by the rate meter. */
const rateWindowSeconds = 10;

/**
 * Parts accepted per second, over the last ten whole seconds: one counter per second in a ring, so the
 * submit path pays an increment and a clock read.
 */
export class RateMeter {
  private readonly counts = new Array<number>(rateWindowSeconds).fill(0);
  private second = Math.floor(Date.now() / 1000);
  private readonly since = Date.now();

  private advance(now: number): void {
    const second = Math.floor(now / 1000);
    if (second === this.second) return;
    const steps = Math.min(second - this.second, rateWindowSeconds);
    for (let i = 1; i <= steps; i++) this.counts[(this.second + i) % rateWindowSeconds] = 0;
    this.second = second;
  }

  add(): void {
    const now = Date.now();
    this.advance(now);
    this.counts[this.second % rateWindowSeconds]++;
  }

  /** Parts per second, over the ten seconds before now (or the time since the start, when shorter). */
  perSecond(): number {
    const now = Date.now();
    this.advance(now);
    let total = 0;
    for (const count of this.counts) total += count;
    const seconds = Math.min(rateWindowSeconds, Math.max(1, (now - this.since) / 1000));
    return Math.round((total / seconds) * 10) / 10;
  }
}

/** The last error of a connector and when it happened, kept for its status. */
export class LastError {
  message: string | null = null;
  at: number | null = null;

  set(message: string): void {
    this.message = message;
    this.at = Date.now();
  }
}

/** Who publishes a row: this process, by host name and process id. */
export function instanceName(): string {
  return `${hostname()}:${process.pid}`;
}

/** A connector's status as one row of `connector_status`, from one process (`instance`). */
export interface PublishedStatus extends ConnectorStatus {
  instance: string;
  role: string;
  updatedAt: number;
}

/** Where the publisher writes (the delivery service, over the `connector_status` table). */
export interface ConnectorStatusSink {
  saveConnectorStatus(rows: PublishedStatus[]): Promise<void>;
  removeConnectorStatus(instance: string): Promise<void>;
  /** Deletes the rows not written since `before`: processes that died without removing theirs. */
  pruneConnectorStatus(before: number): Promise<void>;
}

/** How often every connector's row is written, live or not. */
export const publishEveryMs = 2000;
/** How often the statuses are compared in memory, so a change is written within this time. */
const lookEveryMs = 250;
/** Rows of processes gone for this long are deleted by the next publisher that writes. */
const keepStaleMs = 86_400_000;
/** Every this many writes, the stale rows are pruned. */
const pruneEveryWrites = 300;

/**
 * Writes the status of `connectors` every two seconds, and within a quarter second of a change of state,
 * binds up or last error; `stop` writes nothing more and removes this process's rows. A failed write is
 * logged once until one succeeds again: the status is for operators, delivery goes on without it.
 */
export function publishConnectorStatus(
  connectors: readonly ReportsStatus[],
  deps: { sink: ConnectorStatusSink; now: () => number; role: string; instance?: string; log: Log },
) {
  const instance = deps.instance ?? instanceName();
  let lastWritten = 0;
  let lastShape = '';
  let writing: Promise<void> | undefined;
  let failing = false;
  let stopped = false;
  let writes = 0;

  // What a change is: the fields an operator waits on, not the window or the rate, which move all the time.
  const shapeOf = (statuses: ConnectorStatus[]) =>
    statuses.map((s) => `${s.name}|${s.state}|${s.bindsUp}|${s.lastErrorAt ?? ''}`).join(';');

  async function write(statuses: ConnectorStatus[]): Promise<void> {
    const now = deps.now();
    try {
      await deps.sink.saveConnectorStatus(
        statuses.map((s) => ({ ...s, instance, role: deps.role, updatedAt: now })),
      );
      if (writes++ % pruneEveryWrites === 0) await deps.sink.pruneConnectorStatus(now - keepStaleMs);
      if (failing) deps.log.warn({}, 'connector status: written again');
      failing = false;
    } catch (error) {
      if (!failing) deps.log.warn({ err: error }, 'connector status: could not be written; retrying');
      failing = true;
    }
  }

  function look(): void {
    if (stopped || writing) return;
    const statuses = connectors.map((c) => c.status());
    const shape = shapeOf(statuses);
    if (shape === lastShape && Date.now() - lastWritten < publishEveryMs) return;
    lastShape = shape;
    lastWritten = Date.now();
    writing = write(statuses).finally(() => {
      writing = undefined;
    });
  }

  const timer = setInterval(look, lookEveryMs);
  timer.unref();
  look();

  return {
    instance,
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await writing;
      try {
        await deps.sink.removeConnectorStatus(instance);
      } catch (error) {
        deps.log.warn({ err: error }, 'connector status: rows of this process not removed');
      }
    },
  };
}

/** A row not rewritten for this long belongs to a process that stopped publishing: shown as `stale`. */
export const liveForMs = 10_000;

/** One row of `pigeon connectors --json`: the published status, `state` `stale` when the row is old. */
export function connectorStatusJson(row: PublishedStatus, now: number) {
  const live = now - row.updatedAt <= liveForMs;
  return {
    name: row.name,
    instance: row.instance,
    role: row.role,
    kind: row.kind,
    state: live ? row.state : 'stale',
    binds_up: row.bindsUp,
    binds_total: row.bindsTotal,
    window_in_use: row.windowInUse,
    window_size: row.windowSize,
    pps: row.pps,
    last_error: row.lastError,
    last_error_at: row.lastErrorAt === null ? null : new Date(row.lastErrorAt).toISOString(),
    updated_at: new Date(row.updatedAt).toISOString(),
  };
}

/** `pigeon connectors` as a table: one line per connector and delivery process, aligned columns. */
export function connectorStatusTable(rows: readonly PublishedStatus[], now: number): string {
  const header = ['CONNECTOR', 'PROCESS', 'STATE', 'BINDS', 'WINDOW', 'PPS', 'LAST ERROR'];
  const lines = rows.map((row) => {
    const r = connectorStatusJson(row, now);
    return [
      r.name,
      `${r.instance} (${r.role})`,
      r.state === 'stale' ? `stale (${r.updated_at})` : r.state,
      `${r.binds_up}/${r.binds_total}`,
      `${r.window_in_use}/${r.window_size}`,
      r.pps.toFixed(1),
      r.last_error === null ? '-' : `${r.last_error_at} ${r.last_error}`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  return [header, ...lines]
    .map((cells) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
