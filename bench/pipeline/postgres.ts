// Pigeon on PostgreSQL in a bench round: a fresh schema per round (dropped after), what PostgreSQL's own
// processes spend for it, and what its statistics say the round cost.
//   - The schema: `bench_<random>` in the database of BENCH_PIPELINE_PG_URL (or the send bench's), named in
//     the DATABASE_URL the gateway gets (`?schema=`); every connection Pigeon opens carries the application
//     name `pigeon-<schema>` (PGAPPNAME, which the `pg` driver reads), so its backends are found by name.
//   - CPU: at each tick, the pids of pg_stat_activity under that application name (the pool's connections
//     come and go: a backend seen once counts from its start, or from the round's start if it was already
//     there; one that starts and exits between two ticks is missed) are read from /proc like any process.
//     Apart: the server's background processes (walwriter, background writer, checkpointer, autovacuum),
//     shared with every other database and session on the server, so counted beside the backends, not in them.
//   - Statistics: pg_stat_user_tables of the round's schema (exact: only Pigeon's tables are in it), and
//     pg_stat_database of the whole database (every session on the server adds to it: on a shared server, read
//     it as an upper bound), deltas from the round's start until the gateway has stopped (its backends flush
//     their counters when they exit). Statements from pg_stat_statements when the server loads it (database
//     wide as well); skipped, and said so, when it does not.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { withAdvisoryLock } from '../../src/store/db.ts';
import { ProcessSampler, type TreeUsage } from './measure.ts';

export const defaultPgUrl = 'postgres://postgres@127.0.0.1:5432/test';

/** Counters of pg_stat_database taken per accepted message. */
const databaseCounters = [
  'xact_commit',
  'xact_rollback',
  'tup_returned',
  'tup_fetched',
  'tup_inserted',
  'tup_updated',
  'tup_deleted',
  'blks_read',
  'blks_hit',
] as const;
/** Counters of pg_stat_user_tables, per table of the schema. */
const tableCounters = [
  'seq_scan',
  'seq_tup_read',
  'idx_scan',
  'idx_tup_fetch',
  'n_tup_ins',
  'n_tup_upd',
  'n_tup_hot_upd',
  'n_tup_del',
] as const;
type DatabaseCounter = (typeof databaseCounters)[number];
type TableCounter = (typeof tableCounters)[number];
type Counts<K extends string> = Record<K, number>;

interface Snapshot {
  database: Counts<DatabaseCounter>;
  tables: Map<string, Counts<TableCounter>>;
  /** Calls summed over pg_stat_statements for the database, or null without it. */
  statements: number | null;
}

/** What PostgreSQL's statistics say a round cost, per message (accepted, and gone through). */
export interface PostgresStats {
  /** Database-wide deltas (other sessions included), per accepted message. */
  perMessage: Counts<DatabaseCounter> & { statements: number | null };
  /** The schema's tables (exact), per accepted message; tables nothing touched are left out. */
  tables: Record<string, Counts<TableCounter>>;
  /** Why statements per message is missing, when it is. */
  statementsNote?: string;
}

export interface PostgresUsage {
  backends: TreeUsage;
  background: TreeUsage;
}

/** Why PostgreSQL at `url` cannot be used (it does not answer within 5 s, say), or undefined when it can. */
export async function postgresProblem(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A database URL with a query parameter set (the base may have a query string of its own). */
function withParam(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.toString();
}

const backgroundTypes = [
  'walwriter',
  'background writer',
  'checkpointer',
  'autovacuum worker',
  'autovacuum launcher',
];

/** One round's schema on PostgreSQL: created by Pigeon when it starts on `databaseUrl`, dropped by drop(). */
export class PostgresRound {
  readonly schema = `bench_${randomBytes(6).toString('hex')}`;
  readonly applicationName = `pigeon-${this.schema}`;
  /** What the gateway gets as DATABASE_URL. */
  readonly databaseUrl: string;
  /** The environment the gateway needs beside DATABASE_URL. */
  readonly env: Record<string, string>;
  private client: pg.Client | undefined;
  private backendPids: number[] = [];
  private backgroundPids: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private samplers: { backends: ProcessSampler; background: ProcessSampler } | undefined;
  private before: Snapshot | undefined;
  private statementsNote: string | undefined;

  constructor(readonly baseUrl: string) {
    this.databaseUrl = withParam(baseUrl, 'schema', this.schema);
    this.env = { PGAPPNAME: this.applicationName };
  }

  /** Connects the bench's own session (its application name is not the gateway's, so it is not counted). */
  async connect(): Promise<void> {
    this.client = new pg.Client({ connectionString: this.baseUrl, application_name: 'pigeon-bench' });
    this.client.on('error', () => {});
    await this.client.connect();
  }

  /** Starts the round: baselines of the statistics and the CPU of the backends and background processes. */
  async start(intervalMs = 250): Promise<void> {
    this.before = await this.snapshot();
    await this.refresh();
    this.samplers = {
      backends: new ProcessSampler(() => this.backendPids).start(intervalMs),
      background: new ProcessSampler(() => this.backgroundPids).start(intervalMs),
    };
    // The pid lists are refreshed on their own tick; each sampler reads the latest list on its tick.
    this.timer = setInterval(() => {
      this.refreshing ??= this.refresh().finally(() => {
        this.refreshing = undefined;
      });
    }, intervalMs);
  }

  /**
   * Waits until the statistics show `rows` inserted into `table` (at most `timeoutMs`): a backend that has
   * been busy keeps up to a second of counters to itself, and flushes them about 10 s after it goes idle.
   * A baseline taken right after a load (the send bench's warm-up) would otherwise put the load's tail in it.
   */
  async flushed(table: string, rows: number, timeoutMs = 20_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows: found } = await this.session.query<{ n: string }>(
        'select n_tup_ins as n from pg_stat_user_tables where schemaname = $1 and relname = $2',
        [this.schema, table],
      );
      if (Number(found[0]?.n ?? 0) >= rows) return true;
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** CPU so far. */
  usage(): PostgresUsage {
    if (!this.samplers) throw new Error('PostgresRound.usage() before start()');
    return { backends: this.samplers.backends.usage(), background: this.samplers.background.usage() };
  }

  stopSampling(): void {
    clearInterval(this.timer);
    this.samplers?.backends.stop();
    this.samplers?.background.stop();
  }

  /**
   * The statistics' deltas since start(), per accepted message. Call it once the gateway has stopped. The
   * count may be a read that is itself made after the statistics' (the send bench counts the stored rows).
   */
  async finish(acceptedCount: number | (() => Promise<number>)): Promise<PostgresStats> {
    this.stopSampling();
    await this.refreshing;
    if (!this.before) throw new Error('PostgresRound.finish() before start()');
    const after = await this.snapshot();
    const accepted = typeof acceptedCount === 'number' ? acceptedCount : await acceptedCount();
    const per = (n: number) => (accepted > 0 ? n / accepted : 0);
    const database = Object.fromEntries(
      databaseCounters.map((k) => [k, per(after.database[k] - this.before!.database[k])]),
    ) as Counts<DatabaseCounter>;
    const tables: Record<string, Counts<TableCounter>> = {};
    for (const [table, counts] of after.tables) {
      const base = this.before.tables.get(table);
      const delta = Object.fromEntries(
        tableCounters.map((k) => [k, per(counts[k] - (base?.[k] ?? 0))]),
      ) as Counts<TableCounter>;
      if (tableCounters.some((k) => delta[k] !== 0)) tables[table] = delta;
    }
    const statements =
      after.statements === null || this.before.statements === null
        ? null
        : per(after.statements - this.before.statements);
    return {
      perMessage: { ...database, statements },
      tables,
      ...(this.statementsNote ? { statementsNote: this.statementsNote } : {}),
    };
  }

  /**
   * Closes the bench's session and drops the schema (under the lock migrations take, as the tests do), unless
   * it is to be kept.
   */
  async drop(options: { keep?: boolean } = {}): Promise<void> {
    this.stopSampling();
    await this.client?.end().catch(() => {});
    if (options.keep) {
      console.log(`  schema ${this.schema} kept`);
      return;
    }
    await withAdvisoryLock(this.baseUrl, async () => {
      const client = new pg.Client({ connectionString: this.baseUrl });
      await client.connect();
      try {
        await client.query(`drop schema if exists ${this.schema} cascade`);
      } finally {
        await client.end();
      }
    });
  }

  private get session(): pg.Client {
    if (!this.client) throw new Error('PostgresRound: connect() first');
    return this.client;
  }

  private async refresh(): Promise<void> {
    try {
      const { rows } = await this.session.query<{ pid: number; background: boolean }>(
        `select pid, backend_type = any($2) as background from pg_stat_activity
          where application_name = $1 or backend_type = any($2)`,
        [this.applicationName, backgroundTypes],
      );
      this.backendPids = rows.filter((r) => !r.background).map((r) => r.pid);
      this.backgroundPids = rows.filter((r) => r.background).map((r) => r.pid);
    } catch {
      // A failed read keeps the last lists; the next tick tries again.
    }
  }

  private async snapshot(): Promise<Snapshot> {
    const db = await this.session.query<Record<DatabaseCounter, string>>(
      `select ${databaseCounters.join(', ')} from pg_stat_database where datname = current_database()`,
    );
    const tables = await this.session.query<Record<TableCounter, string | null> & { relname: string }>(
      `select relname, ${tableCounters.map((k) => `coalesce(${k}, 0) as ${k}`).join(', ')}
         from pg_stat_user_tables where schemaname = $1`,
      [this.schema],
    );
    const counts = <K extends string>(row: Record<K, string | number | null>, keys: readonly K[]) =>
      Object.fromEntries(keys.map((k) => [k, Number(row[k] ?? 0)])) as Counts<K>;
    return {
      database: counts(db.rows[0], databaseCounters),
      tables: new Map(tables.rows.map((row) => [row.relname, counts(row, tableCounters)])),
      statements: await this.statements(),
    };
  }

  /** Calls in pg_stat_statements for this database, or null (and why) when the server does not load it. */
  private async statements(): Promise<number | null> {
    try {
      const { rows } = await this.session.query<{ calls: string | null }>(
        `select sum(calls) as calls from pg_stat_statements
          where dbid = (select oid from pg_database where datname = current_database())`,
      );
      return Number(rows[0]?.calls ?? 0);
    } catch (error) {
      this.statementsNote = `pg_stat_statements not available (${(error as Error).message}): no statements per message`;
      return null;
    }
  }
}
