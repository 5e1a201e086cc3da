// Whether this process can do its work now: the database answers and has every migration this version knows,
// and, in a process that delivers, the transport can take a submit (the simulator always; SMPP with at least
// one bind up). One small query (the applied migrations' names) proves both database facts, so a load
// balancer may poll it every second; concurrent checks share one query, and a database that does not answer
// within `readyTimeoutMs` is reported as such rather than waited for.
import { sql } from 'kysely';
import type { Db } from '../store/db.ts';

/** What each check found: `ok`, or why not, in words that name no host, port or credential. */
export type Checks = Record<string, string>;

export interface Readiness {
  ready: boolean;
  checks: Checks;
}

export const readyTimeoutMs = 1_000;

/** The migrations Kysely recorded as applied, read from its own table (in the store's search path). */
export async function appliedMigrations(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return rows.map((row) => row.name);
}

/** Rejects with `message` unless `promise` settles within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A transport as readiness sees it: its name and whether a submit could go out now. */
export interface TransportState {
  readonly name: string;
  ready(): boolean;
}

export function createReadinessCheck(deps: {
  applied: () => Promise<string[]>;
  known: readonly string[];
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}) {
  const { applied, known, log } = deps;
  let transport: TransportState | undefined;
  let checking: Promise<Readiness> | undefined;
  /** The checks that failed last time, so that a failure and its end are logged once each, not per poll. */
  let failed: Checks = {};

  async function check(): Promise<Readiness> {
    const checks: Checks = {};
    try {
      const names = new Set(await within(applied(), readyTimeoutMs, 'timeout'));
      checks.database = 'ok';
      const missing = known.filter((name) => !names.has(name));
      checks.migrations =
        missing.length === 0
          ? 'ok'
          : `${missing.length} not applied (${missing[0]}${missing.length > 1 ? ', …' : ''}); run pigeon migrate`;
    } catch (error) {
      const timedOut = (error as Error).message === 'timeout';
      checks.database = timedOut ? `no answer within ${readyTimeoutMs} ms` : 'not answering';
      checks.migrations = 'unknown while the database does not answer';
      if (!failed.database)
        log.warn({ err: timedOut ? undefined : error }, `not ready: database ${checks.database}`);
    }
    if (transport) {
      checks.transport = transport.ready()
        ? 'ok'
        : transport.name === 'smpp'
          ? 'no SMPP bind is up'
          : 'not started';
      if (checks.transport !== 'ok' && !failed.transport) log.warn({}, `not ready: ${checks.transport}`);
    }
    const nowFailed = Object.fromEntries(Object.entries(checks).filter(([, v]) => v !== 'ok'));
    if (Object.keys(failed).length > 0 && Object.keys(nowFailed).length === 0) log.info({}, 'ready again');
    failed = nowFailed;
    return { ready: Object.keys(nowFailed).length === 0, checks };
  }

  return {
    /** From now on the transport is part of this process's readiness. */
    watchTransport(state: TransportState): void {
      transport = state;
    },

    /** This process's readiness; checks asked for while one runs get its answer. */
    check(): Promise<Readiness> {
      checking ??= check().finally(() => {
        checking = undefined;
      });
      return checking;
    },
  };
}
