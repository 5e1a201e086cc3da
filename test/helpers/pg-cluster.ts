// A private PostgreSQL cluster for tests that stop or restart the server: initdb in a temporary directory, run
// as the `postgres` user on a free loopback port, removed afterwards. The machine's shared server is never
// touched. Each test takes a schema of its own through `url(schema)`.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

/** Where Debian puts PostgreSQL 15's server programs; PG_BIN overrides it. */
const pgBin = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PgCluster {
  port: number;
  /** The cluster's `postgres` database, with `?schema=` when a schema is named. */
  url(schema?: string): string;
  /** Stops the server (`pg_ctl stop -m fast`): clients' connections are closed, new ones refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** `pg_ctl restart -m fast`: the connections of every client break, and the server answers again. */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  destroy(): Promise<void>;
}

/** Whether this machine can run a private cluster (the server's programs are installed). */
export async function canRunPgCluster(): Promise<boolean> {
  try {
    await run(join(pgBin, 'pg_ctl'), ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** As the `postgres` user when the tests run as root (initdb refuses root), else as the current user. */
function asPostgres(program: string, args: string[]) {
  const command = join(pgBin, program);
  return process.getuid?.() === 0
    ? run('runuser', ['-u', 'postgres', '--', command, ...args], { timeout: 60_000 })
    : run(command, args, { timeout: 60_000 });
}

export async function startPgCluster(): Promise<PgCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-pg-'));
  // The postgres user must own its data directory, and reach it through the temporary directory.
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  if (process.getuid?.() === 0) await run('chown', ['postgres', dir]);
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  // Loopback only, its socket in the cluster's own directory, and no fsync: a test's data need not survive
  // the machine, only the server.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c full_page_writes=off -c max_connections=200`;
  const ctl = (...args: string[]) =>
    asPostgres('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '30', ...args]);
  const start = async () => {
    await ctl('-o', options, 'start');
  };
  await start();
  const base = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let running = true;
  return {
    port,
    url: (schema) => (schema ? `${base}?schema=${schema}` : base),
    async stop() {
      await ctl('-m', 'fast', 'stop');
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async restart() {
      await ctl('-m', 'fast', '-o', options, 'restart');
      running = true;
    },
    async destroy() {
      if (running) await ctl('-m', 'immediate', 'stop').catch(() => {});
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs one statement on the cluster (a schema to create, a count to read). */
export async function pgQuery<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
