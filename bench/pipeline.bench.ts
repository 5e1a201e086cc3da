// `npm run bench -- pipeline`: the whole pipeline end to end, Pigeon (on SQLite, and on PostgreSQL) side by
// side with Kannel 1.4.5, every part in its own process on 127.0.0.1:
//
//   wrk ─ POST /send ──────> Pigeon (npm start) ═╗                       ╔═> POST DLR webhook ─┐
//                                                ╠═ SMPP ═> SMSC sim ═══╣                      ├─> receiver
//   wrk ─ GET sendsms ─> smsbox ─> bearerbox ════╝  4 binds × window 100 ╚═> GET dlr-url ──────┘
//
// The SMSC (bench/pipeline/smsc.ts, the `smpp` package's server) and the receiver (bench/pipeline/receiver.ts)
// stay up for the whole run; each round starts a fresh gateway (Pigeon: new SQLite file or PostgreSQL schema,
// account and webhook; Kannel: new config and store) and stops it after. BENCH_PIPELINE_GATEWAYS chooses them
// (kannel, pigeon-sqlite, pigeon-postgres; `pigeon` is SQLite); Pigeon on PostgreSQL runs on a schema of
// BENCH_PIPELINE_PG_URL's database, and PostgreSQL's CPU and statistics are counted with it
// (bench/pipeline/postgres.ts). Rounds, each repeated BENCH_PIPELINE_ROUNDS
// times with the gateways' order alternating:
//   (a) saturation: single sends for BENCH_PIPELINE_SECONDS at 64 connections (wrk, 2 threads), after the
//       same load for BENCH_PIPELINE_WARMUP_SECONDS (15; 0 measures from a cold start), left out of the figures;
//   (b) bulk: exactly BENCH_PIPELINE_BULK single sends, time to the last DLR callback;
//   (c) campaign (Pigeon only): one POST /send of BENCH_PIPELINE_CAMPAIGN recipients, after one of
//       BENCH_PIPELINE_CAMPAIGN_WARMUP (20,000; 0 starts cold), left out of the figures;
//   (d) paced: BENCH_PIPELINE_PACED_RATE sends/s for BENCH_PIPELINE_PACED_SECONDS, send → DLR latency.
// After every round the bookkeeping must be exact: one callback per message the SMSC got, none twice.
// It reports targets and does not fail on them; it exits non-zero when the bookkeeping is wrong.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  type Gateway,
  type GatewayOptions,
  kannelVersion,
  startKannel,
  startPigeon,
} from './pipeline/gateways.ts';
import { boxTimes, busyPercent, TreeSampler, type TreeUsage, waitQuiet } from './pipeline/measure.ts';
import { defaultPgUrl, PostgresRound, type PostgresUsage, postgresProblem } from './pipeline/postgres.ts';
import { Helper, killAll, sleep, spawnGroup, timeLimit, waitFor } from './pipeline/processes.ts';
import type { ReceiverCounts, ReceiverStats } from './pipeline/receiver.ts';
import {
  bookkeepingLine,
  type GatewayName,
  gatewayNames,
  gatewayTitles,
  type Kind,
  postgresStatsLines,
  printSummary,
  type RoundRecord,
  roundLine,
} from './pipeline/report.ts';
import type { SmscStats } from './pipeline/smsc.ts';

const repo = join(import.meta.dirname, '..');
const helpers = join(import.meta.dirname, 'pipeline');

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, not ${raw}`);
  return value;
}

const shape = {
  seconds: setting('BENCH_PIPELINE_SECONDS', 20),
  warmupSeconds: setting('BENCH_PIPELINE_WARMUP_SECONDS', 15),
  bulk: setting('BENCH_PIPELINE_BULK', 100_000),
  campaign: setting('BENCH_PIPELINE_CAMPAIGN', 100_000),
  campaignWarmup: setting('BENCH_PIPELINE_CAMPAIGN_WARMUP', 20_000),
  rounds: setting('BENCH_PIPELINE_ROUNDS', 3),
  pacedRate: setting('BENCH_PIPELINE_PACED_RATE', 2_000),
  pacedSeconds: setting('BENCH_PIPELINE_PACED_SECONDS', 10),
  connections: 64,
  threads: 2,
  binds: 4,
  window: 100,
};
/** Bounds of every wait: the drain after a load, and the quiet box before a round. */
const drainMaxSeconds = setting('BENCH_PIPELINE_DRAIN_MAX_S', 300);
const quietPercent = setting('BENCH_PIPELINE_QUIET_PCT', 15);
const quietMaxSeconds = setting('BENCH_PIPELINE_QUIET_MAX_S', 60);
/** Time bound of the bulk round's load (its count is exact). */
const bulkMaxSeconds = setting('BENCH_PIPELINE_BULK_MAX_S', 600);
/** Count bound of the saturation round's load per second, far above what either gateway reaches. */
const saturationMaxPerSecond = 50_000;
/** The PostgreSQL database Pigeon PG runs on: a fresh schema of it per round. */
const pgUrl = process.env.BENCH_PIPELINE_PG_URL || defaultPgUrl;

/** BENCH_PIPELINE_GATEWAYS, in its order; `pigeon` (the name before PostgreSQL was measured) is SQLite. */
function gatewaysWanted(): GatewayName[] {
  const names = (process.env.BENCH_PIPELINE_GATEWAYS || 'kannel,pigeon-sqlite,pigeon-postgres')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
    .map((name) => (name === 'pigeon' ? 'pigeon-sqlite' : name));
  for (const name of names) {
    if (!gatewayNames.includes(name as GatewayName)) {
      throw new Error(
        `BENCH_PIPELINE_GATEWAYS: unknown gateway ${name} (${gatewayNames.join(', ')}, or pigeon)`,
      );
    }
  }
  return [...new Set(names as GatewayName[])];
}

const kinds = (process.env.BENCH_PIPELINE_KINDS ?? 'saturation,bulk,campaign,paced').split(',') as Kind[];
/** Extra environment for Pigeon, to measure a variant: "WEBHOOK_CONCURRENCY_PER_WEBHOOK=64 ...". */
const pigeonEnv = Object.fromEntries(
  (process.env.BENCH_PIPELINE_PIGEON_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);

function commitOf(dir: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: dir,
    }).toString();
    return dirty.trim() ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

interface Harness {
  smsc: Helper;
  receiver: Helper;
  runDir: string;
}

interface LoadOutcome {
  /** Epoch ms of the first send (campaign: the request's start). */
  startMs: number;
  sent: number;
  accepted: number;
  rejected: number;
  socketErrors: number;
  seconds: number;
  httpP50Ms?: number;
  httpP99Ms?: number;
  firstRejected?: string;
  answerMs?: number;
}

/** Collects a child's stdout until it closes. */
function output(group: ReturnType<typeof spawnGroup>): Promise<string> {
  let text = '';
  group.child.stdout!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return new Promise((resolve) => group.child.once('close', () => resolve(text)));
}

const lineCount = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').length - 1 : 0;

let wrkRuns = 0;
/** wrk against the gateway with load.lua: `maxRequests` sends at most, for `seconds` at most. */
async function runWrk(
  harness: Harness,
  gateway: Gateway,
  options: { maxRequests: number; seconds: number; rate: number },
  onStart: (pid: number) => void,
): Promise<LoadOutcome> {
  const doneFile = join(harness.runDir, `wrk-${++wrkRuns}.done`);
  const wrk = spawnGroup(
    'wrk',
    'wrk',
    [
      `-t${shape.threads}`,
      `-c${shape.connections}`,
      `-d${options.seconds}s`,
      '--timeout',
      '30s',
      '-s',
      join(helpers, 'load.lua'),
      gateway.url,
    ],
    {
      env: {
        ...process.env,
        TARGET: gateway.name,
        THREADS: String(shape.threads),
        MAX_REQ: String(options.maxRequests),
        RATE: String(options.rate),
        DONE_FILE: doneFile,
        PIGEON_TOKEN: gateway.token ?? '',
        RECEIVER: `http://127.0.0.1:${harness.receiver.port}`,
      },
      stdout: 'pipe',
    },
  );
  onStart(wrk.pid);
  const text = output(wrk);
  // wrk always runs for -d: once every thread has sent its share and had its answers, it is interrupted
  // (SIGINT makes it print its results). A wrk that overruns -d by a minute is stopped.
  const deadline = Date.now() + (options.seconds + 60) * 1000;
  let interrupted = false;
  while (wrk.alive) {
    if (!interrupted && lineCount(doneFile) >= shape.threads) {
      wrk.signal('SIGINT');
      interrupted = true;
    }
    if (Date.now() > deadline) {
      console.log('  wrk overran its time bound: stopped');
      break;
    }
    await sleep(100);
  }
  await wrk.stop(5_000);
  const out = await text;
  const result = /^RESULT (.*)$/m.exec(out);
  if (!result) throw new Error(`wrk gave no result:\n${out}`);
  const fields = Object.fromEntries(
    result[1].split(' ').map((pair) => {
      const [key, value] = pair.split('=');
      return [key, Number(value)];
    }),
  );
  return {
    startMs: fields.first_send_ms,
    sent: fields.sent,
    accepted: fields.accepted,
    rejected: fields.rejected,
    socketErrors: fields.socket_errors,
    seconds: (fields.last_answer_ms - fields.first_send_ms) / 1000,
    httpP50Ms: fields.http_p50_ms,
    httpP99Ms: fields.http_p99_ms,
    firstRejected: /^FIRST_REJECTED (.*)$/m.exec(out)?.[1],
  };
}

/** The campaign client: one POST /send of `recipients`, bounded by `timeoutSeconds`. */
async function runCampaign(
  gateway: Gateway,
  recipients: number,
  onStart: (pid: number) => void,
): Promise<LoadOutcome> {
  const timeoutSeconds = 300;
  const client = spawnGroup(
    'campaign client',
    process.execPath,
    [
      '--import',
      'tsx',
      join(helpers, 'campaign-client.ts'),
      gateway.url,
      gateway.token ?? '',
      String(recipients),
      String(timeoutSeconds),
    ],
    { cwd: repo, stdout: 'pipe' },
  );
  onStart(client.pid);
  const text = output(client);
  const finished = await Promise.race([
    client.exited,
    timeLimit((timeoutSeconds + 30) * 1000).then(() => 'late'),
  ]);
  await client.stop(2_000);
  if (finished === 'late') throw new Error('the campaign client overran its time bound');
  const outcome = JSON.parse(await text) as {
    startMs: number;
    answerMs: number;
    answer?: { status: number; sent?: number; details?: string };
    error?: string;
  };
  const answer = outcome.answer;
  if (answer?.status !== 1) {
    throw new Error(`the campaign was refused: ${outcome.error ?? JSON.stringify(answer)}`);
  }
  const sent = answer.sent ?? 0;
  return {
    startMs: outcome.startMs,
    sent,
    accepted: sent,
    rejected: recipients - sent,
    socketErrors: 0,
    seconds: outcome.answerMs / 1000,
    answerMs: outcome.answerMs,
  };
}

interface Measured {
  atMs: number;
  /** CPU seconds of this orchestrator since the round started. */
  bench: number;
  gateway: TreeUsage;
  smsc: TreeUsage;
  receiver: TreeUsage;
  load: TreeUsage;
  /** Pigeon on PostgreSQL: the server's processes. */
  postgres?: PostgresUsage;
  box: { busy: number; total: number };
}

/**
 * Waits until every message the load got accepted has reached the SMSC and had its callback, and nothing
 * has moved for a second (bounded: no progress for 30 s, or BENCH_PIPELINE_DRAIN_MAX_S in all). What
 * `measure` read when the counters last moved is the round's usage, so the quiet second is not in it.
 */
async function drain<M>(
  harness: Harness,
  accepted: number,
  measure: () => M,
): Promise<{ measured: M; drained: boolean }> {
  const deadline = Date.now() + drainMaxSeconds * 1000;
  let last = '';
  let lastChange = Date.now();
  let measured = measure();
  for (;;) {
    const smsc = await harness.smsc.ask<SmscStats>('stats');
    const receiver = await harness.receiver.ask<ReceiverCounts>('counts');
    const now = Date.now();
    const state = `${smsc.submits}/${smsc.receiptsAnswered}/${receiver.callbacks}`;
    if (state !== last) {
      last = state;
      lastChange = now;
      measured = measure();
    }
    const complete = receiver.callbacks >= smsc.submits && smsc.submits >= accepted;
    if (complete && now - lastChange >= 1_000) return { measured, drained: true };
    if (now - lastChange > 30_000 || now > deadline) {
      console.log(
        `  drain gave up: ${smsc.submits} submit_sm, ${receiver.callbacks} callbacks for ${accepted} accepted, ` +
          `${now - lastChange > 30_000 ? 'nothing moved for 30 s' : `after ${drainMaxSeconds} s`}`,
      );
      return { measured, drained: false };
    }
    await sleep(250);
  }
}

const cpuSeconds = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1e6;

/** The wrk rounds' bounds: exact count for the bulk, time (and a count far above reach) for the others. */
const wrkBounds: Record<Exclude<Kind, 'campaign'>, { maxRequests: number; seconds: number; rate: number }> = {
  saturation: { maxRequests: saturationMaxPerSecond * shape.seconds, seconds: shape.seconds, rate: 0 },
  bulk: { maxRequests: shape.bulk, seconds: bulkMaxSeconds, rate: 0 },
  paced: {
    maxRequests: 2 * shape.pacedRate * shape.pacedSeconds,
    seconds: shape.pacedSeconds,
    rate: shape.pacedRate,
  },
};

async function startGateway(harness: Harness, name: GatewayName, postgres?: PostgresRound): Promise<Gateway> {
  const options: GatewayOptions = {
    repo,
    runDir: harness.runDir,
    smscPort: harness.smsc.port,
    receiverPort: harness.receiver.port,
    binds: shape.binds,
    window: shape.window,
    boundBinds: async () => (await harness.smsc.ask<SmscStats>('stats')).bound,
    pigeonEnv,
  };
  if (name === 'kannel') return startKannel(options);
  return startPigeon(options, postgres ? { url: postgres.databaseUrl, env: postgres.env } : undefined);
}

async function round(
  harness: Harness,
  name: GatewayName,
  kind: Kind,
  rep: number,
  context: { commit: string; kannelVersion?: string },
): Promise<RoundRecord> {
  // Pigeon on PostgreSQL gets a schema of its own, dropped after the round whatever happens.
  const postgres = name === 'pigeon-postgres' ? new PostgresRound(pgUrl) : undefined;
  try {
    await postgres?.connect();
    const gateway = await startGateway(harness, name, postgres);
    let record: RoundRecord | undefined;
    try {
      record = await measureRound(harness, gateway, name, kind, rep, context, postgres);
    } finally {
      await gateway.stop();
      // The next gateway's binds are counted at the SMSC: this one's must be gone first.
      await waitFor(
        `${name}'s SMPP sessions closed`,
        async () => (await harness.smsc.ask<SmscStats>('stats')).bound === 0,
        { timeoutMs: 15_000 },
      );
      // A round that ran keeps nothing (Pigeon's database of a bulk round is hundreds of MB); one that failed
      // keeps its logs.
      if (record && !process.env.BENCH_PIPELINE_KEEP) rmSync(gateway.dir, { recursive: true, force: true });
    }
    // Read once the gateway has stopped: its backends flush their statistics when they exit. Per message
    // that had its callback: wrk does not count the answers still in flight when it is stopped.
    if (postgres && record.postgres) {
      record.postgres.stats = await postgres.finish(record.bookkeeping.callbacks);
    }
    return record;
  } finally {
    // BENCH_PIPELINE_KEEP keeps the round's schema too, for a look at its tables and indexes afterwards.
    await postgres?.drop({ keep: Boolean(process.env.BENCH_PIPELINE_KEEP) }).catch((error: Error) => {
      console.log(`  could not drop schema ${postgres.schema}: ${error.message}`);
    });
  }
}

/** One round on a started gateway: the load, the drain, and what everything used meanwhile. */
async function measureRound(
  harness: Harness,
  gateway: Gateway,
  name: GatewayName,
  kind: Kind,
  rep: number,
  context: { commit: string; kannelVersion?: string },
  postgres: PostgresRound | undefined,
): Promise<RoundRecord> {
  // A round measures a gateway that has run a while: Pigeon's processes compile and optimize their code over
  // their first tens of thousands of messages, and a round from cold charges that to whichever gateway is
  // slower (it spends more of its round cold). A saturation round follows the same load, a campaign a smaller
  // campaign (the big send's own code, its plan and bulk inserts, is not the single sends'); their callbacks
  // awaited.
  const warmUp =
    kind === 'saturation' && shape.warmupSeconds > 0
      ? runWrk(
          harness,
          gateway,
          {
            maxRequests: saturationMaxPerSecond * shape.warmupSeconds,
            seconds: shape.warmupSeconds,
            rate: 0,
          },
          () => {},
        )
      : kind === 'campaign' && shape.campaignWarmup > 0
        ? runCampaign(gateway, shape.campaignWarmup, () => {})
        : undefined;
  if (warmUp) {
    const { drained } = await drain(harness, (await warmUp).accepted, () => null);
    if (!drained) throw new Error(`${name}'s warm-up did not drain`);
  }
  // The gateway's start-up (tsx compiling Pigeon, say) is over before the round starts.
  const busyBeforePercent = await waitQuiet(quietPercent, quietMaxSeconds);
  await harness.smsc.ask('reset');
  await harness.receiver.ask('reset');
  gateway.markLogs();
  const samplers = {
    gateway: new TreeSampler([...gateway.roots]).start(),
    smsc: new TreeSampler([harness.smsc.pid]).start(),
    receiver: new TreeSampler([harness.receiver.pid]).start(),
    load: new TreeSampler([]).start(),
  };
  await postgres?.start();
  const boxBefore = boxTimes();
  const benchBefore = process.cpuUsage();
  const startedMs = Date.now();
  const measure = (): Measured => ({
    atMs: Date.now(),
    bench: cpuSeconds(process.cpuUsage(benchBefore)),
    gateway: samplers.gateway.usage(),
    smsc: samplers.smsc.usage(),
    receiver: samplers.receiver.usage(),
    load: samplers.load.usage(),
    postgres: postgres?.usage(),
    box: boxTimes(),
  });
  const timeline: [number, number, number, number, number][] = [];
  const ticker = setInterval(() => {
    void Promise.all([
      harness.smsc.ask<SmscStats>('stats'),
      harness.receiver.ask<ReceiverCounts>('counts'),
    ]).then(
      ([smsc, receiver]) => {
        const usage = samplers.gateway.usage();
        timeline.push([
          Math.round((Date.now() - startedMs) / 100) / 10,
          smsc.submits,
          receiver.callbacks,
          Math.round(usage.cpuSeconds * 100) / 100,
          Math.round(usage.treeRssMb),
        ]);
      },
      () => {},
    );
  }, 1_000);
  try {
    const onStart = (pid: number) => samplers.load.addRoot(pid);
    const load =
      kind === 'campaign'
        ? await runCampaign(gateway, shape.campaign, onStart)
        : await runWrk(harness, gateway, wrkBounds[kind], onStart);
    const loadEndMs = Date.now();
    const atLoadEnd = {
      smsc: await harness.smsc.ask<SmscStats>('stats'),
      receiver: await harness.receiver.ask<ReceiverCounts>('counts'),
    };
    const { measured, drained } = await drain(harness, load.accepted, measure);
    // CPU is what was used until the last callback; memory peaks are those of the whole round.
    const memory = samplers.gateway.stop();
    const smsc = await harness.smsc.ask<SmscStats>('stats');
    const receiver = await harness.receiver.ask<ReceiverStats>('stats');

    const measuredSeconds = (measured.atMs - startedMs) / 1000;
    const boxBusy = busyPercent(boxBefore, measured.box);
    const percentOfCore = (usage: TreeUsage) => (100 * usage.cpuSeconds) / measuredSeconds;
    const duringLoadSeconds = (loadEndMs - load.startMs) / 1000;
    const lastCallbackAfterS = receiver.lastMs ? (receiver.lastMs - load.startMs) / 1000 : null;
    const exact =
      drained &&
      receiver.duplicates === 0 &&
      receiver.withoutKey === 0 &&
      receiver.badBodies === 0 &&
      receiver.callbacks === receiver.distinct &&
      receiver.callbacks === smsc.submits &&
      load.accepted > 0 &&
      load.accepted <= receiver.callbacks &&
      smsc.submits <= load.sent;
    const pg = measured.postgres;
    const pgCpuSeconds = pg ? pg.backends.cpuSeconds + pg.background.cpuSeconds : 0;
    const perMessage = (cpuSeconds: number) =>
      receiver.callbacks ? (1000 * cpuSeconds) / receiver.callbacks : null;
    return {
      at: new Date(startedMs).toISOString(),
      commit: context.commit,
      kannelVersion: name === 'kannel' ? context.kannelVersion : undefined,
      gateway: name,
      kind,
      rep,
      shape: {
        connections: kind === 'campaign' ? 1 : shape.connections,
        binds: shape.binds,
        window: shape.window,
        ...(kind === 'saturation' ? { seconds: shape.seconds } : {}),
        ...(kind === 'bulk' ? { sends: shape.bulk } : {}),
        ...(kind === 'campaign' ? { recipients: shape.campaign } : {}),
        ...(kind === 'paced' ? { rate: shape.pacedRate, seconds: shape.pacedSeconds } : {}),
        ...(name !== 'kannel' && Object.keys(pigeonEnv).length > 0
          ? { pigeonEnv: process.env.BENCH_PIPELINE_PIGEON_ENV ?? '' }
          : {}),
      },
      load: {
        sent: load.sent,
        accepted: load.accepted,
        rejected: load.rejected,
        socketErrors: load.socketErrors,
        seconds: load.seconds,
        acceptedPerS: load.accepted / load.seconds,
        httpP50Ms: load.httpP50Ms,
        httpP99Ms: load.httpP99Ms,
        firstRejected: load.firstRejected,
        answerMs: load.answerMs,
      },
      duringLoad: {
        seconds: duringLoadSeconds,
        submits: atLoadEnd.smsc.submits,
        callbacks: atLoadEnd.receiver.callbacks,
        callbacksPerS: atLoadEnd.receiver.callbacks / duringLoadSeconds,
      },
      lastCallbackAfterS,
      callbacksPerS: lastCallbackAfterS ? receiver.callbacks / lastCallbackAfterS : null,
      latencyMs: { p50: receiver.latency.p50, p99: receiver.latency.p99, max: receiver.latency.max },
      usage: {
        cpuSeconds: measured.gateway.cpuSeconds,
        cpuMsPerMessage: perMessage(measured.gateway.cpuSeconds),
        withDatabaseCpuMsPerMessage: perMessage(measured.gateway.cpuSeconds + pgCpuSeconds),
        cpuPercentOfCore: percentOfCore(measured.gateway),
        peakTreeRssMb: memory.peakTreeRssMb,
        peakProcessRssMb: memory.peakProcessRssMb,
        processes: memory.processes,
        problems: gateway.problems(),
      },
      ...(postgres && pg
        ? {
            postgres: {
              schema: postgres.schema,
              backendsCpuSeconds: pg.backends.cpuSeconds,
              backendsCpuMsPerMessage: perMessage(pg.backends.cpuSeconds),
              backgroundCpuSeconds: pg.background.cpuSeconds,
              backgroundCpuMsPerMessage: perMessage(pg.background.cpuSeconds),
              cpuMsPerMessage: perMessage(pgCpuSeconds),
              backends: pg.backends.processes,
            },
          }
        : {}),
      harnessCpuPercent: {
        smsc: percentOfCore(measured.smsc),
        receiver: percentOfCore(measured.receiver),
        load: percentOfCore(measured.load),
        bench: (100 * measured.bench) / measuredSeconds,
      },
      box: {
        busyPercent: boxBusy,
        busyBeforePercent,
        otherPercentOfCore:
          boxBusy * availableParallelism() -
          (100 *
            (measured.gateway.cpuSeconds +
              pgCpuSeconds +
              measured.smsc.cpuSeconds +
              measured.receiver.cpuSeconds +
              measured.load.cpuSeconds +
              measured.bench)) /
            measuredSeconds,
      },
      measuredSeconds,
      bookkeeping: {
        sent: load.sent,
        accepted: load.accepted,
        submits: smsc.submits,
        receiptsSent: smsc.receiptsSent,
        receiptsAnswered: smsc.receiptsAnswered,
        callbacks: receiver.callbacks,
        distinct: receiver.distinct,
        duplicates: receiver.duplicates,
        withoutKey: receiver.withoutKey,
        badBodies: receiver.badBodies,
        drained,
        exact,
      },
      timeline,
    };
  } finally {
    clearInterval(ticker);
    for (const sampler of Object.values(samplers)) sampler.stop();
    postgres?.stopSampling();
  }
}

export async function run(): Promise<void> {
  if (!onPath('wrk')) {
    console.log('wrk is not installed: apt-get install wrk (Debian package `wrk`), then run again.');
    process.exitCode = 1;
    return;
  }
  const kannel = onPath('bearerbox') && onPath('smsbox') ? kannelVersion() : undefined;
  const gateways = gatewaysWanted();
  if (gateways.includes('kannel') && !kannel) {
    gateways.splice(gateways.indexOf('kannel'), 1);
    console.log(
      'Kannel is not installed: measuring Pigeon alone. For the comparison: apt-get install kannel ' +
        '(then stop and disable the kannel service the package starts: the bench runs its own bearerbox and smsbox).',
    );
  }
  if (gateways.includes('pigeon-postgres')) {
    const problem = await postgresProblem(pgUrl);
    if (problem) {
      gateways.splice(gateways.indexOf('pigeon-postgres'), 1);
      console.log(
        `PostgreSQL at ${pgUrl} does not answer (${problem}): no Pigeon PG rounds. Set BENCH_PIPELINE_PG_URL.`,
      );
    }
  }
  const commit = commitOf(repo);
  const resultsDir = '/tmp/pigeon-bench-pipeline';
  mkdirSync(resultsDir, { recursive: true });
  const results =
    process.env.BENCH_PIPELINE_RESULTS ??
    join(resultsDir, `results-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
  const runDir = mkdtempSync('/tmp/pigeon-bench-pipeline-run-');
  console.log(
    `pipeline: ${gateways.map((g) => gatewayTitles[g]).join(', ')} (Pigeon ${commit}${kannel ? `, Kannel ${kannel}` : ''}` +
      `${gateways.includes('pigeon-postgres') ? `, PostgreSQL ${pgUrl}` : ''}), each round ${shape.rounds} times; saturation ` +
      `${shape.seconds} s, bulk ${shape.bulk}, campaign ${shape.campaign}, paced ${shape.pacedRate}/s for ` +
      `${shape.pacedSeconds} s; ${shape.connections} connections, ${shape.binds} binds × window ${shape.window}; ` +
      `one JSON line per round in ${results}`,
  );

  // An interrupted bench stops everything it started before it goes.
  const interrupted = () => {
    killAll();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  process.once('exit', killAll);

  const records: RoundRecord[] = [];
  let failures = 0;
  let harness: Harness | undefined;
  try {
    harness = {
      smsc: await Helper.start('SMSC simulator', join(helpers, 'smsc.ts'), repo),
      receiver: await Helper.start('DLR receiver', join(helpers, 'receiver.ts'), repo),
      runDir,
    };
    const enabled = (kind: Kind) =>
      kinds.includes(kind) && (kind === 'bulk' ? shape.bulk > 0 : kind !== 'campaign' || shape.campaign > 0);
    for (let rep = 1; rep <= shape.rounds; rep++) {
      const order = rep % 2 === 1 ? gateways : [...gateways].reverse();
      const plan: [GatewayName, Kind][] = [];
      for (const kind of ['saturation', 'bulk', 'paced'] as Kind[]) {
        if (enabled(kind)) for (const name of order) plan.push([name, kind]);
      }
      // The campaign is Pigeon's alone (Kannel has no such request).
      if (enabled('campaign')) for (const name of order) if (name !== 'kannel') plan.push([name, 'campaign']);
      for (const [name, kind] of plan) {
        console.log(`round ${rep}: ${name} ${kind}`);
        try {
          const record = await round(harness, name, kind, rep, { commit, kannelVersion: kannel });
          records.push(record);
          appendFileSync(results, `${JSON.stringify(record)}\n`);
          console.log(`  ${roundLine(record)}`);
          console.log(`  bookkeeping: ${bookkeepingLine(record)}`);
          if (record.load.rejected > 0) {
            console.log(
              `  ${record.load.rejected} sends refused, first: ${record.load.firstRejected ?? '?'}`,
            );
          }
          if (record.usage.problems) console.log(`  ${name} logged: ${record.usage.problems}`);
          for (const line of record.postgres?.stats ? postgresStatsLines(record.postgres.stats) : []) {
            console.log(`  ${line}`);
          }
        } catch (error) {
          failures++;
          console.log(`  round failed: ${(error as Error).message}`);
        }
      }
    }
  } finally {
    await harness?.smsc.stop();
    await harness?.receiver.stop();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    process.off('exit', killAll);
  }

  const exact = printSummary(records, shape);
  console.log(`\nOne JSON line per round: ${results}`);
  if (failures > 0) console.log(`${failures} round(s) could not run; their files are in ${runDir}`);
  else if (process.env.BENCH_PIPELINE_KEEP) console.log(`Gateway files kept in ${runDir}`);
  else rmSync(runDir, { recursive: true, force: true });
  if (!exact || failures > 0) process.exitCode = 1;
}
