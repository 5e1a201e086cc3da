// Redirects per second of the link server, next to a bare node:http server answering a fixed 302, in the
// same run. Each server runs in a child process so that autocannon (in this process) does not share its
// event loop: on two cores, one is the server's and one is the load generator's.
//
// Pigeon's server runs on a temporary SQLite file holding one campaign of 10,000 recipients sent through
// POST /send (one link each), and records every request as a click (a browser user agent), so the figure
// includes the click writes: the click row before each 302, and the click folder running beside the server
// as in production (the link's counter, the click's number and its CLICKER event).
//
// How the load is shaped, and why:
// - Clicks must spread over the links as a campaign's recipients' do. One autocannon with a per-request
//   setupRequest costs the generator more than the bare server spends per request (about 40,000 req/s on
//   this machine, generator-bound), and one shared list of requests makes all connections walk it in step
//   (every group commit would then hold 64 clicks on one link). So the load is 64 autocannon instances of
//   one connection each, each cycling through its own disjoint slice of the links, requests built once.
// - The same load runs against the bare server. It is also measured with the generator's cheapest load,
//   one fixed path (the "about 80,000 redirects/s" reference); the target is checked against the higher.
// - Rates are counted by the server over a window inside the load (after autocannon's start-up), from a
//   'request' listener present on both servers.
import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import inspector from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { type AutocannonResult, autocannon } from './autocannon.ts';

const childMode = process.env.PIGEON_LINKS_BENCH_CHILD;
const linkCount = Number(process.env.BENCH_LINKS ?? 10_000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const warmupSeconds = 2;
/** Time given to autocannon's start-up before the counting window opens, and after it closes. */
const marginSeconds = 1.5;
const longUrl = 'https://shop.example.com/offers/spring?utm_source=sms&utm_campaign=bench';
const browser =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

interface Ready {
  type: 'ready';
  port: number;
  codes: string[];
}
interface Stats {
  type: 'stats';
  /** Requests received so far, counted by a 'request' listener. */
  requests: number;
  atMs: number;
  clickRows: number;
  counterSum: number;
  clickerEvents: number;
  /** Clicks stored but not folded yet (counter and CLICKER event still to come). */
  unfolded: number;
  cpuMs: number;
  /** Event-loop busy time: JavaScript plus synchronous SQLite work, including its I/O waits. */
  busyMs: number;
  /** Read and write system calls, and bytes written, so far (sockets and files), from /proc/self/io. */
  readCalls: number;
  writeCalls: number;
  writeBytes: number;
}
type ChildMessage = Ready | Stats;

/** The load's result, summed over its autocannon instances: what this bench reads of it. */
type LoadResult = Omit<AutocannonResult, 'requests' | 'non2xx'> & { requests: { sent: number } };

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Read and write system calls, and bytes written, of this process (Linux); zeros elsewhere. */
function processIo(): { readCalls: number; writeCalls: number; writeBytes: number } {
  try {
    const io = readFileSync('/proc/self/io', 'utf8');
    const field = (name: string) => Number(io.match(new RegExp(`^${name}: (\\d+)`, 'm'))?.[1] ?? 0);
    return { readCalls: field('syscr'), writeCalls: field('syscw'), writeBytes: field('wchar') };
  } catch {
    return { readCalls: 0, writeCalls: 0, writeBytes: 0 };
  }
}

/** The child's side: one server, listening on a loopback port, answering the parent's messages. */
async function child(mode: string): Promise<void> {
  const cpuStart = process.cpuUsage();
  let server: Server;
  let codes: string[];
  let database = async () => ({ clickRows: 0, counterSum: 0, clickerEvents: 0, unfolded: 0 });
  let cleanup: () => Promise<void> = async () => {};

  if (mode === 'bare') {
    server = createServer((_req, res) => {
      res.writeHead(302, ['Location', longUrl, 'Cache-Control', 'no-store', 'Content-Length', '0']);
      res.end();
    });
    // Paths of the same shape as Pigeon's, so autocannon does the same work against both servers.
    codes = Array.from({ length: linkCount }, (_, i) => String(i).padStart(10, '0'));
  } else {
    const { loadConfig } = await import('../src/config.ts');
    const { createDeps } = await import('../src/deps.ts');
    const { createLinkServer } = await import('../src/links/link-server.ts');
    const { closeLinkServer } = await import('../src/links/link-server.ts');
    const { createClickFolder } = await import('../src/links/click-fold.ts');
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-links-bench-'));
    const deps = await createDeps(loadConfig({ DATABASE_URL: join(dir, 'pigeon.db'), LOG_LEVEL: 'warn' }));
    // A real campaign through POST /send, so every click has a message (gsmsmsid) and writes its CLICKER
    // event like a production click does.
    const { buildApi } = await import('../src/runtime.ts');
    const { token } = await deps.services.accounts.createAccount({
      email: 'bench@example.com',
      password: 'bench password',
      credits: linkCount * 2,
    });
    const app = buildApi({ config: deps.config, logger: deps.logger, services: deps.services });
    const sent = await app.inject({
      method: 'POST',
      url: '/send',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        sms: {
          message: { text: 'Spring offers: <-short->', links: [longUrl] },
          recipients: {
            gsm: Array.from({ length: linkCount }, (_, i) => ({
              value: `336${String(10_000_000 + i).padStart(8, '0')}`,
              gsmsmsid: `bench-${i}`,
            })),
          },
        },
      }),
    });
    const ticket = Number((sent.json() as { ticket?: string }).ticket);
    await app.close();
    if (!ticket) throw new Error(`bench campaign not created: ${sent.body}`);
    const rows = await deps.store.db
      .selectFrom('links')
      .select('code')
      .where('campaign_id', '=', ticket)
      .orderBy('id')
      .execute();
    if (rows.length !== linkCount)
      throw new Error(`bench campaign has ${rows.length} links, not ${linkCount}`);
    codes = rows.map((r) => r.code);
    const links = deps.services.links;
    // Statements run on the bench database before the load, to measure schema or pragma alternatives
    // (for instance BENCH_LINKS_SQL="drop index clicks_link"); separated by ';'.
    const { sql } = await import('kysely');
    for (const statement of (process.env.BENCH_LINKS_SQL ?? '').split(';').filter((s) => s.trim())) {
      await sql.raw(statement).execute(deps.store.db);
    }
    server = createLinkServer(deps);
    // As the runtime runs it beside the link server.
    // BENCH_FOLD_DELAY_MS, BENCH_FOLD_BATCH and BENCH_FOLD_POLL_MS try other fold settings than the defaults.
    const folder = createClickFolder({
      fold: deps.services.clickFold,
      links,
      log: deps.logger,
      options: {
        ...(process.env.BENCH_FOLD_DELAY_MS ? { delayMs: Number(process.env.BENCH_FOLD_DELAY_MS) } : {}),
        ...(process.env.BENCH_FOLD_BATCH ? { batchSize: Number(process.env.BENCH_FOLD_BATCH) } : {}),
        ...(process.env.BENCH_FOLD_POLL_MS ? { pollMs: Number(process.env.BENCH_FOLD_POLL_MS) } : {}),
      },
    });
    folder.start();
    const db = deps.store.db;
    database = async () => {
      const rows = await db
        .selectFrom('clicks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const sum = await db
        .selectFrom('links')
        .select((eb) => eb.fn.sum<number>('clicks').as('n'))
        .executeTakeFirstOrThrow();
      const events = await db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('type', '=', 'CLICKER')
        .executeTakeFirstOrThrow();
      const unfolded = await db
        .selectFrom('clicks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('id', '>', (eb) => eb.selectFrom('cursors').select('position').where('name', '=', 'clicks'))
        .executeTakeFirstOrThrow();
      return {
        clickRows: Number(rows.n),
        counterSum: Number(sum.n),
        clickerEvents: Number(events.n),
        unfolded: Number(unfolded.n),
      };
    };
    cleanup = async () => {
      await closeLinkServer(server, links);
      await folder.stop();
      await deps.close();
      rmSync(dir, { recursive: true, force: true });
    };
  }

  let requests = 0;
  server.on('request', () => {
    requests++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // BENCH_LINKS_PROFILE=dir writes a CPU profile of each server over the counting window only.
  const profileDir = process.env.BENCH_LINKS_PROFILE;
  const profiler = profileDir ? new inspector.Session() : undefined;
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      profiler!.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  process.on('message', async (message: string) => {
    if (message === 'profile-start' && profiler) {
      profiler.connect();
      await post('Profiler.enable');
      await post('Profiler.start');
    }
    if (message === 'profile-stop' && profiler) {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      mkdirSync(profileDir!, { recursive: true });
      writeFileSync(join(profileDir!, `${mode}-${process.pid}.cpuprofile`), JSON.stringify(profile));
      profiler.disconnect();
    }
    if (message === 'stats') {
      const cpu = process.cpuUsage(cpuStart);
      const stats: Stats = {
        type: 'stats',
        requests,
        atMs: performance.now(),
        cpuMs: (cpu.user + cpu.system) / 1000,
        busyMs: performance.eventLoopUtilization().active,
        ...processIo(),
        ...(await database()),
      };
      process.send?.(stats);
    }
    if (message === 'stop') {
      if (mode === 'bare') server.close();
      await cleanup();
      process.exit(0);
    }
  });
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port, codes });
}

class Child {
  private readonly waiting: ((message: ChildMessage) => void)[] = [];
  private readonly exited: Promise<number | null>;

  constructor(private readonly process: ChildProcess) {
    process.on('message', (message: ChildMessage) => this.waiting.shift()?.(message));
    this.exited = new Promise((resolve) => process.once('exit', resolve));
  }

  static async start(mode: 'bare' | 'pigeon'): Promise<{ child: Child; ready: Ready }> {
    const proc = fork(fileURLToPath(import.meta.url), [], {
      // BENCH_LINKS_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the servers.
      execArgv: [...(process.env.BENCH_LINKS_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx'],
      env: { ...process.env, PIGEON_LINKS_BENCH_CHILD: mode },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const child = new Child(proc);
    const ready = (await child.next()) as Ready;
    return { child, ready };
  }

  next(): Promise<ChildMessage> {
    return Promise.race([
      new Promise<ChildMessage>((resolve) => this.waiting.push(resolve)),
      this.exited.then((code): never => {
        throw new Error(`bench child exited with ${code}`);
      }),
    ]);
  }

  /** A message the child answers with nothing. */
  send(message: string): void {
    this.process.send(message);
  }

  async stats(): Promise<Stats> {
    this.process.send('stats');
    return (await this.next()) as Stats;
  }

  /**
   * Stats once the server has answered everything: when autocannon stops, up to one request per
   * connection is still being served (and its click recorded), so wait until the count stops moving and
   * every stored click is folded.
   */
  async settledStats(): Promise<Stats> {
    let last = await this.stats();
    for (;;) {
      await sleep(0.2);
      const now = await this.stats();
      if (now.requests === last.requests && now.clickRows === last.clickRows && now.unfolded === 0)
        return now;
      last = now;
    }
  }

  async stop(): Promise<void> {
    this.process.send('stop');
    await this.exited;
  }
}

type Shape = 'spread' | 'fixed';

/** Runs the load; the results of all instances summed. */
async function load(port: number, codes: string[], seconds: number, shape: Shape): Promise<LoadResult> {
  const common = {
    url: `http://127.0.0.1:${port}`,
    duration: seconds,
    headers: { 'user-agent': browser },
  };
  const runs =
    shape === 'fixed'
      ? [autocannon({ ...common, connections, path: `/${codes[0]}` })]
      : Array.from({ length: connections }, (_, c) =>
          autocannon({
            ...common,
            connections: 1,
            requests: codes
              .filter((_, i) => i % connections === c)
              .map((code) => ({ method: 'GET', path: `/${code}` })),
          }),
        );
  const results = await Promise.all(runs);
  const sum = (pick: (r: AutocannonResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  return {
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    '2xx': sum((r) => r['2xx']),
    '3xx': sum((r) => r['3xx']),
    '4xx': sum((r) => r['4xx']),
    '5xx': sum((r) => r['5xx']),
    requests: { sent: sum((r) => r.requests.sent) },
    latency: {
      p50: Math.max(...results.map((r) => r.latency.p50)),
      p99: Math.max(...results.map((r) => r.latency.p99)),
    },
  };
}

interface Measured {
  result: LoadResult;
  /** Requests per second the server received inside the counting window. */
  rps: number;
  serverCpu: number;
  serverBusy: number;
  /** Event-loop busy time per request: what one request costs the server, whichever side was the limit. */
  busyUsPerRequest: number;
  /** System calls and bytes per request: the request and the 302 themselves, plus the database's pages for Pigeon. */
  readCallsPerRequest: number;
  writeCallsPerRequest: number;
  writeBytesPerRequest: number;
  before: Stats;
  after: Stats;
}

async function measure(mode: 'bare' | 'pigeon', shape: Shape): Promise<Measured> {
  const { child, ready } = await Child.start(mode);
  try {
    await load(ready.port, ready.codes, warmupSeconds, shape);
    const before = await child.settledStats();
    const running = load(ready.port, ready.codes, durationSeconds + 2 * marginSeconds, shape);
    await sleep(marginSeconds);
    child.send('profile-start');
    const windowStart = await child.stats();
    await sleep(durationSeconds);
    const windowEnd = await child.stats();
    child.send('profile-stop');
    if (mode === 'pigeon')
      console.log(`  clicks stored but not folded yet at the window's end: ${fmt(windowEnd.unfolded)}`);
    const result = await running;
    const after = await child.settledStats();
    const windowMs = windowEnd.atMs - windowStart.atMs;
    const requests = windowEnd.requests - windowStart.requests;
    const busyMs = windowEnd.busyMs - windowStart.busyMs;
    return {
      result,
      rps: (requests * 1000) / windowMs,
      serverCpu: (windowEnd.cpuMs - windowStart.cpuMs) / windowMs,
      serverBusy: busyMs / windowMs,
      busyUsPerRequest: (busyMs * 1000) / requests,
      readCallsPerRequest: (windowEnd.readCalls - windowStart.readCalls) / requests,
      writeCallsPerRequest: (windowEnd.writeCalls - windowStart.writeCalls) / requests,
      writeBytesPerRequest: (windowEnd.writeBytes - windowStart.writeBytes) / requests,
      before,
      after,
    };
  } finally {
    await child.stop();
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function line(label: string, m: Measured): string {
  const r = m.result;
  return (
    `${label.padEnd(34)} ${fmt(m.rps).padStart(7)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  ` +
    `server loop busy ${(m.serverBusy * 100).toFixed(0)}% (${m.busyUsPerRequest.toFixed(1)} µs/req), ` +
    `CPU ${(m.serverCpu * 100).toFixed(0)}%, ${m.readCallsPerRequest.toFixed(2)} reads, ${m.writeCallsPerRequest.toFixed(2)} writes / ${fmt(m.writeBytesPerRequest)} B per req  errors ${r.errors + r.timeouts}  non-3xx ${r['2xx'] + r['4xx'] + r['5xx']}`
  );
}

/** Checks one Pigeon run's bookkeeping: click rows = counter increments = CLICKER events = answered 302s. */
function checkClicks(pigeon: Measured): void {
  const r = pigeon.result;
  const recorded = pigeon.after.clickRows - pigeon.before.clickRows;
  const counted = pigeon.after.counterSum - pigeon.before.counterSum;
  const events = pigeon.after.clickerEvents - pigeon.before.clickerEvents;
  // autocannon stops counting at its deadline: requests already sent then are answered (and recorded) by
  // the server but not counted by autocannon, so recorded clicks exceed its 3xx by at most those.
  const unanswered = r.requests.sent - (r['2xx'] + r['3xx'] + r['4xx'] + r['5xx']);
  console.log(
    `  clicks recorded: ${fmt(recorded)} rows, links.clicks +${fmt(counted)}, CLICKER events ${fmt(events)}; ` +
      `autocannon: ${fmt(r['3xx'])} 302s + ${unanswered} sent but unanswered at its deadline`,
  );
  if (recorded !== counted || recorded !== events) {
    console.log('  MISMATCH: click rows, link counters and CLICKER events disagree');
  }
  if (recorded < r['3xx'] || recorded > r['3xx'] + unanswered) {
    console.log('  MISMATCH: recorded clicks do not match answered redirects');
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;

export async function run(): Promise<void> {
  const variant = process.env.BENCH_LINKS_SQL ? ` with BENCH_LINKS_SQL="${process.env.BENCH_LINKS_SQL}"` : '';
  console.log(
    `links${variant}: ${rounds} rounds of three runs, ${connections} connections, ${durationSeconds} s counted per run ` +
      `after a ${warmupSeconds} s warm-up, ${fmt(linkCount)} links, servers in child processes`,
  );
  // This host's speed drifts by tens of percent within minutes: each round measures the bare server and
  // Pigeon back to back, and the verdict is the median of the rounds' ratios.
  const ratios: number[] = [];
  const sameLoad: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    console.log(`round ${round}`);
    const bareFixed = await measure('bare', 'fixed');
    console.log(line('bare node:http 302, one fixed path', bareFixed));
    const bareSpread = await measure('bare', 'spread');
    console.log(line('bare node:http 302, spread load', bareSpread));
    const pigeon = await measure('pigeon', 'spread');
    console.log(line('pigeon link server, spread load', pigeon));
    ratios.push(pigeon.rps / Math.max(bareFixed.rps, bareSpread.rps));
    sameLoad.push(pigeon.rps / bareSpread.rps);
    console.log(
      `  ratio pigeon / bare: ${percent(ratios[ratios.length - 1])} of the faster bare figure, ` +
        `${percent(sameLoad[sameLoad.length - 1])} under the same load`,
    );
    checkClicks(pigeon);
  }
  console.log(
    `ratio pigeon / bare, median of ${rounds}: ${percent(median(ratios))} of the faster bare figure ` +
      `(target >= 50%; rounds ${ratios.map(percent).join(', ')}), ${percent(median(sameLoad))} under the same load`,
  );
}

if (childMode) await child(childMode);
