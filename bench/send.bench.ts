// POST /send over real HTTP against a server in a child process on a temp SQLite file, so the load
// generator (autocannon, in this process) does not share the server's event loop or CPU time.
//   (a) single-recipient sends: requests/s with 64 connections for 15 s;
//   (b) one send of 100,000 distinct recipients with one link: wall time and the server's peak RSS.
// Run: npm run bench -- send    (BENCH_SEND_SECONDS and BENCH_SEND_RECIPIENTS shorten it).
// BENCH_SEND_DATABASES=sqlite,postgres runs both on each database, alternating ((a) in that order, (b) in the
// other); on PostgreSQL (BENCH_SEND_PG_URL, a fresh schema per server) the server's CPU is counted with that
// of the PostgreSQL backends serving it, and the schema's table statistics are printed per send.
// BENCH_SEND_PRICES=200 gives the account a price list of that many countries (France among them) and runs each
// measure BENCH_SEND_PAIRS times (default 2) without it and with it, alternating (ABAB…), then prints each
// variant's median and their ratio: pricing must not be a cost per recipient that shows. BENCH_SEND_RULES=N adds N
// content rules of the account's (words, link domains and patterns, none matching the bench's text) to the same
// variant, alone or with the prices: rules, checked once per send, must not show either.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { getCountries } from 'libphonenumber-js/max';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { buildApi } from '../src/runtime.ts';
import { autocannon } from './autocannon.ts';
import { defaultPgUrl, PostgresRound } from './pipeline/postgres.ts';
import { postgresStatsLines } from './pipeline/report.ts';

const here = fileURLToPath(import.meta.url);
const seconds = Number(process.env.BENCH_SEND_SECONDS ?? 15);
const bulkRecipients = Number(process.env.BENCH_SEND_RECIPIENTS ?? 100_000);
const databases = (process.env.BENCH_SEND_DATABASES || 'sqlite').split(',').map((name) => name.trim());
for (const name of databases) {
  if (name !== 'sqlite' && name !== 'postgres') {
    throw new Error(`BENCH_SEND_DATABASES: sqlite or postgres, not ${name}`);
  }
}
const pgUrl = process.env.BENCH_SEND_PG_URL || defaultPgUrl;
const priceCountries = Number(process.env.BENCH_SEND_PRICES ?? 0);
const ruleCount = Number(process.env.BENCH_SEND_RULES ?? 0);
/** The variant measured against the plain one: the price list, the content rules, or both. */
const withVariant = priceCountries > 0 || ruleCount > 0;
const pairs = Number(process.env.BENCH_SEND_PAIRS ?? 2);

/** A price list of `count` countries, France first (the bench's numbers are French: 2 credits a part), 2 to 4. */
function priceList(count: number): string {
  const countries = ['FR', ...getCountries().filter((c) => c !== 'FR')].slice(0, count);
  if (countries.length < count) throw new Error(`BENCH_SEND_PRICES: at most ${countries.length} countries`);
  return countries.map((country, i) => `${country},${2 + (i % 3)}`).join('\n');
}

/** One run's figure (requests per second, or milliseconds) and the server's CPU per send or per recipient, µs. */
interface Figure {
  value: number;
  cpuUs: number;
}

/** Where one server stores: a temp SQLite file, or a fresh PostgreSQL schema (dropped by cleanup). */
interface BenchDatabase {
  name: string;
  url: string;
  /** The server's environment beside DATABASE_URL. */
  env: Record<string, string>;
  postgres?: PostgresRound;
  cleanup(): Promise<void>;
}

async function benchDatabase(kind: string, dir: string, file: string): Promise<BenchDatabase> {
  if (kind === 'sqlite') {
    return { name: 'SQLite', url: join(dir, file), env: {}, cleanup: async () => {} };
  }
  const postgres = new PostgresRound(pgUrl);
  await postgres.connect();
  return {
    name: 'PostgreSQL',
    url: postgres.databaseUrl,
    env: postgres.env,
    postgres,
    cleanup: () => postgres.drop(),
  };
}

/** The child: serve the API on an ephemeral port and say where on stdout. */
async function serveChild(): Promise<void> {
  const config = loadConfig({ ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' });
  const deps = await createDeps(config, { logger: pino({ level: 'warn' }) });
  // With the server's metrics (the HTTP hook, the process metrics) unless METRICS=off: the cost they add.
  deps.ops.startProcessMetrics();
  const app = buildApi({ config, logger: deps.logger, services: deps.services, ops: deps.ops });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ url })}\n`);
  process.on('SIGTERM', () => {
    void app.close().then(() => deps.close().then(() => process.exit(0)));
  });
}

interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startServer(database: BenchDatabase): Promise<Server> {
  const child = spawn(
    process.execPath,
    [...(process.env.BENCH_SEND_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', here],
    {
      env: { ...process.env, ...database.env, PIGEON_SEND_BENCH_CHILD: '1', DATABASE_URL: database.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Resident set size now and at its peak (VmHWM), in MB, from /proc. */
function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

/** CPU time (user + system) the process has used, in ms, from /proc (clock ticks are 10 ms here). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The bench's account, with the price list and content rules asked for when `variant` is 1. */
async function setupAccount(databaseUrl: string, variant: number): Promise<string> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const deps = await createDeps(config, { logger: pino({ level: 'silent' }) });
  try {
    const created = await deps.services.accounts.createAccount({
      email: 'bench@example.com',
      password: 'bench-password',
      credits: 1_000_000_000,
    });
    const accountId = Number(created.account_id);
    if (variant > 0 && priceCountries > 0)
      await deps.services.prices.set(accountId, priceList(priceCountries));
    for (let i = 0; variant > 0 && i < ruleCount; i++) {
      const [kind, value] = [
        ['word', `blockedword${i}`],
        ['domain', `blocked${i}.example`],
        ['pattern', `free\\s+prize\\s+${i}`],
      ][i % 3];
      await deps.services.moderation.addRule('cli', {
        account_id: String(accountId),
        kind,
        value,
        action: i % 2 === 0 ? 'refuse' : 'hold',
      });
    }
    return created.token;
  } finally {
    await deps.close();
  }
}

async function countCampaigns(databaseUrl: string): Promise<number> {
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const deps = await createDeps(config, { logger: pino({ level: 'silent' }) });
  try {
    const row = await deps.store.db
      .selectFrom('campaigns')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await deps.close();
  }
}

/** (a): answers the average requests per second. */
async function singleRecipientRate(database: BenchDatabase, variant: number): Promise<Figure> {
  const token = await setupAccount(database.url, variant);
  const server = await startServer(database);
  try {
    const body = JSON.stringify({
      sms: {
        message: {
          text: 'Your parcel is on its way: <-short->',
          pushtype: 'alert',
          links: ['https://example.com/t/1'],
        },
        recipients: { gsm: [{ value: '33612345678', gsmsmsid: 'bench' }] },
      },
    });
    const request = {
      url: `${server.url}/send`,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    };
    // A short warm-up lets V8 optimize the hot path before the measured run.
    await autocannon({ ...request, connections: 16, duration: 2 });
    const warmed = await countCampaigns(database.url);
    if (database.postgres && !(await database.postgres.flushed('campaigns', warmed))) {
      console.log("    PostgreSQL's statistics still lack some of the warm-up: they are counted in (a)'s");
    }
    await database.postgres?.start();
    const cpuBefore = cpuMsOf(server.child.pid!);
    const result = await autocannon({ ...request, connections: 64, duration: seconds });
    const cpuMs = cpuMsOf(server.child.pid!) - cpuBefore;
    const pgUsage = database.postgres?.usage();
    const mem = memoryOf(server.child.pid!);
    // The server stops before the campaigns are counted: its backends flush their statistics as they exit,
    // and the count's own scan is not the round's.
    await server.stop();
    let stored = 0;
    const countStored = async () => {
      stored = (await countCampaigns(database.url)) - warmed;
      return stored;
    };
    const stats = database.postgres ? await database.postgres.finish(countStored) : undefined;
    if (!stats) await countStored();
    const pgMs = pgUsage ? 1000 * (pgUsage.backends.cpuSeconds + pgUsage.background.cpuSeconds) : 0;
    const perSend = (ms: number) => Math.round((ms * 1000) / stored);
    console.log(
      `(a) ${database.name}${pricedLabel(variant)}: POST /send, 1 recipient + 1 link, 64 connections, ${seconds} s, server in a child process:\n` +
        `    ${Math.round(result.requests.average)} req/s average (${result.requests.total} requests), ` +
        `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; ` +
        `non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}; ` +
        `campaigns stored ${stored}; server RSS ${mem.rssMb} MB (peak ${mem.peakMb} MB)\n` +
        `    server CPU ${perSend(cpuMs)} µs per send (${Math.round(cpuMs / 10 / seconds)}% of one core)` +
        (pgUsage
          ? ` + PostgreSQL ${perSend(pgMs)} µs (backends ${perSend(1000 * pgUsage.backends.cpuSeconds)}, up to ` +
            `${pgUsage.backends.processes} at once; background ${perSend(1000 * pgUsage.background.cpuSeconds)}) = ` +
            `${perSend(cpuMs + pgMs)} µs per send`
          : ''),
    );
    for (const line of stats ? postgresStatsLines(stats) : []) console.log(`    ${line}`);
    // autocannon stops counting at the deadline, so up to one request per connection is stored but uncounted.
    if (stored < result['2xx'] || stored > result['2xx'] + 64) {
      console.log(`    WARNING: ${result['2xx']} answers 2xx but ${stored} campaigns stored`);
    }
    return { value: result.requests.average, cpuUs: (cpuMs * 1000) / stored };
  } finally {
    await server.stop();
  }
}

const pricedLabel = (variant: number) =>
  variant > 0
    ? [
        priceCountries > 0 ? `, ${priceCountries}-country price list` : '',
        ruleCount > 0 ? `, ${ruleCount} content rules` : '',
      ].join('')
    : '';

/** (b): answers the send's wall time in ms. */
async function bulkSend(database: BenchDatabase, variant: number): Promise<Figure> {
  const token = await setupAccount(database.url, variant);
  const server = await startServer(database);
  try {
    const gsm = Array.from({ length: bulkRecipients }, (_, i) => ({ value: `336${10_000_000 + i}` }));
    const body = JSON.stringify({
      sms: {
        message: {
          text: 'Spring sale: 20% off everything this weekend, see <-short-> for the details.',
          pushtype: 'marketing',
          links: ['https://shop.example.com/spring-sale?utm_source=sms'],
        },
        recipients: { gsm },
      },
    });
    const before = memoryOf(server.child.pid!);
    const cpuBefore = cpuMsOf(server.child.pid!);
    const started = performance.now();
    const response = await fetch(`${server.url}/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    const answer = (await response.json()) as Record<string, unknown>;
    const elapsedMs = performance.now() - started;
    const cpuMs = cpuMsOf(server.child.pid!) - cpuBefore;
    const after = memoryOf(server.child.pid!);
    console.log(
      `(b) ${database.name}${pricedLabel(variant)}: POST /send with ${bulkRecipients} distinct recipients and 1 link (${(body.length / 1e6).toFixed(1)} MB body):\n` +
        `    ${Math.round(elapsedMs)} ms; server RSS ${before.rssMb} MB before, peak ${after.peakMb} MB; ` +
        `answer status ${answer.status}, sent ${answer.sent}, cost ${answer.cost}; server CPU ${Math.round(cpuMs)} ms`,
    );
    return { value: elapsedMs, cpuUs: (cpuMs * 1000) / bulkRecipients };
  } finally {
    await server.stop();
  }
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-send-bench-'));
  // Each database in turn, (b) in the other order than (a): neither always runs on a box the other warmed.
  const rounds: [(database: BenchDatabase, variant: number) => Promise<Figure>, string[], string, string][] =
    [
      [singleRecipientRate, databases, 'rate', 'req/s'],
      [bulkSend, [...databases].reverse(), 'bulk', 'ms'],
    ];
  // Without BENCH_SEND_PRICES, each measure once, as always; with it, without and with the list in turn.
  const variants = withVariant ? Array.from({ length: 2 * pairs }, (_, i) => i % 2) : [0];
  const summary: string[] = [];
  try {
    let round = 0;
    for (const [measure, order, name, unit] of rounds) {
      for (const kind of order) {
        const figures = new Map<number, Figure[]>();
        for (const variant of variants) {
          const database = await benchDatabase(kind, dir, `${name}-${round++}.db`);
          try {
            const figure = await measure(database, variant);
            figures.set(variant, [...(figures.get(variant) ?? []), figure]);
          } finally {
            await database.cleanup();
          }
        }
        if (withVariant) {
          const label = `(${name === 'rate' ? 'a' : 'b'}) ${kind}`;
          const per = name === 'rate' ? 'send' : 'recipient';
          summary.push(`${label} ${compare(figures, unit, (f) => f.value, 0)}`);
          summary.push(`${label} ${compare(figures, `server CPU µs per ${per}`, (f) => f.cpuUs, 1)}`);
        }
      }
    }
    for (const line of summary) console.log(line);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One figure's medians without and with the price list, their ratio, and every run. */
function compare(figures: Map<number, Figure[]>, what: string, of: (f: Figure) => number, digits: number) {
  const runs = (variant: number) => figures.get(variant)!.map(of);
  const without = median(runs(0));
  const priced = median(runs(1));
  const list = (variant: number) =>
    runs(variant)
      .map((v) => v.toFixed(digits))
      .join(', ');
  return (
    `${what}: median ${without.toFixed(digits)} without, ${priced.toFixed(digits)} with${pricedLabel(1)}, ` +
    `ratio ${(priced / without).toFixed(3)} (runs ${list(0)} / ${list(1)})`
  );
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

if (process.env.PIGEON_SEND_BENCH_CHILD === '1' && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await serveChild();
}
