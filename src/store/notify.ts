// Nudges through PostgreSQL, so that processes started apart (ROLE=api here, ROLE=delivery there) wake each
// other within milliseconds instead of at their next poll: a nudge is a NOTIFY on a channel of the topic and
// of Pigeon's schema (two Pigeons, or two test schemas, on one database never wake each other), heard by every
// process that LISTENs to it.
//
// One connection per process carries both ways, its own and not the pool's: a pooled connection goes back to
// the pool and stops hearing, and a NOTIFY queued behind a saturated pool's waiting queries would wake the
// others only once they ran. It is opened when the process first sends or listens, and is named
// `pigeon-nudges <schema>` in pg_stat_activity.
//
// Sending: one `select pg_notify(...)` after the work committed, at most one in flight per topic (nudges that
// come meanwhile are one more after it), so thousands of sends a second cost a few NOTIFYs, never one per
// message, and a send's own transaction neither waits for nor serialises on the notification queue's lock (a
// NOTIFY inside it would take that lock at its commit). A NOTIFY that fails is dropped: the listeners' polls
// find the work.
//
// When the connection drops (the server restarted, the backend was terminated, the network failed) it is
// opened again, after a backoff from 100 ms doubling to 5 s, for as long as the process runs; each time it is
// open again, every topic's listeners here are woken once, since work may have come while it was deaf, and a
// topic nudged meanwhile is notified once. It never ends the process, and is closed on shutdown.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { backoffMs } from '../shared/backoff.ts';
import { type Log, silentLog } from '../shared/log.ts';

const reconnectBaseMs = 100;
const reconnectMaxMs = 5_000;
/** A connection attempt that takes longer is abandoned and tried again. */
const connectTimeoutMs = 5_000;
/** How long closing waits for the server to see the connection off. */
const closeTimeoutMs = 1_000;
/** PostgreSQL's identifiers (channel names among them) are at most 63 bytes. */
const maxIdentifierBytes = 63;

/** The application_name of a process's nudge connection (LISTEN and NOTIFY) on `schema`. */
export const nudgeApplicationName = (schema: string): string =>
  `pigeon-nudges ${schema}`.slice(0, maxIdentifierBytes);

/** The channel a topic's nudges travel on, for the Pigeon in `schema`. */
export function nudgeChannel(schema: string, topic: string): string {
  const name = `pigeon.${schema}.${topic}`;
  if (name.length <= maxIdentifierBytes) return name;
  // A long schema name: a digest of it keeps channels of distinct schemas apart.
  return `pigeon.${createHash('sha256').update(schema).digest('hex').slice(0, 32)}.${topic}`;
}

export interface DatabaseNudges {
  send(topic: string): void;
  listen(topic: string, heard: () => void): void;
  /** Stops sending and closes the nudge connection. */
  close(): Promise<void>;
}

export function postgresNudges(options: {
  /** Where the nudge connection goes: the pool's server and database. */
  connectionString: string;
  schema: string;
  log?: Log;
}): DatabaseNudges {
  const { connectionString, schema } = options;
  const log = options.log ?? silentLog;
  const inFlight = new Set<string>();
  /** Topics nudged while their NOTIFY was in flight, or while the connection was not open: one more each. */
  const owed = new Set<string>();
  const heard = new Map<string, () => void>();
  let closed = false;
  let client: pg.Client | undefined;
  /** Whether `client` has connected and LISTENs to every topic in `heard`. */
  let open = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  /** The last statement sent on `client`: the next waits for it, so the connection has one query at a time. */
  let busy: Promise<unknown> = Promise.resolve();

  /** Runs `text` on `on` once its statements before have answered (pg queues them itself, deprecated). */
  function serial(on: pg.Client, text: string, values?: unknown[]): Promise<unknown> {
    const run = () => on.query(text, values);
    const sent = busy.then(run, run);
    busy = sent.catch(() => {});
    return sent;
  }

  function notify(topic: string): void {
    if (closed) return;
    if (!open || inFlight.has(topic)) {
      owed.add(topic);
      if (!client && !retry) connect();
      return;
    }
    const current = client!;
    inFlight.add(topic);
    serial(current, 'select pg_notify($1, $2)', [nudgeChannel(schema, topic), ''])
      .catch(() => {})
      .finally(() => {
        inFlight.delete(topic);
        if (client === current && open && owed.delete(topic)) notify(topic);
      });
  }

  const listenSql = (topic: string) => `listen "${nudgeChannel(schema, topic)}"`;

  function lost(from: pg.Client, error?: Error): void {
    if (client !== from) return;
    client = undefined;
    open = false;
    inFlight.clear();
    from.removeAllListeners('notification');
    from.end().catch(() => {});
    if (closed) return;
    failures++;
    const waitMs = backoffMs(failures, reconnectBaseMs, reconnectMaxMs);
    if (failures === 1) {
      log.warn({ err: error?.message, schema, retryInMs: waitMs }, 'nudge connection lost; reconnecting');
    }
    retry = setTimeout(connect, waitMs);
  }

  function connect(): void {
    retry = undefined;
    if (closed) return;
    const next = new pg.Client({
      connectionString,
      application_name: nudgeApplicationName(schema),
      keepAlive: true,
      // A dead peer behind a silent network is found by TCP keepalive, probing after 10 s of quiet.
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: connectTimeoutMs,
    });
    client = next;
    busy = Promise.resolve();
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next));
    next.on('notification', (message) => {
      for (const [topic, hear] of heard) if (message.channel === nudgeChannel(schema, topic)) hear();
    });
    void (async () => {
      try {
        await next.connect();
        for (const topic of heard.keys()) await next.query(listenSql(topic));
      } catch (error) {
        lost(next, error as Error);
        return;
      }
      if (client !== next) return;
      open = true;
      if (failures > 0) log.info({ schema, failures }, 'nudge connection open again');
      failures = 0;
      // Work may have come while no connection listened: every listener looks once; and the nudges owed
      // while it was closed go out now.
      for (const hear of heard.values()) hear();
      const topics = [...owed];
      owed.clear();
      for (const topic of topics) notify(topic);
    })();
  }

  return {
    send: notify,
    listen(topic, hear) {
      const known = heard.has(topic);
      heard.set(topic, hear);
      if (closed || known) return;
      if (!client && !retry) connect();
      else if (client && open) {
        const current = client;
        serial(current, listenSql(topic)).catch((error: Error) => lost(current, error));
      }
      // Otherwise the connection being opened LISTENs to it once connected.
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      retry = undefined;
      const current = client;
      client = undefined;
      if (!current) return;
      // A server that does not answer the goodbye (gone, or behind a cut network) does not hold up the stop.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        current.end().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, closeTimeoutMs);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
