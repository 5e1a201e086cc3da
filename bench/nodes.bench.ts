// `npm run bench -- nodes`: the roles as separate processes on PostgreSQL, no supervisor between them
// (ROLE=api, ROLE=delivery, ROLE=webhooks, each started as its own command), the simulator as carrier (every
// message delivered, its receipt at once), a loopback receiver in this process for the DLR webhooks.
//   latency: one node of each role, polls a minute apart (BENCH_NODES_POLL_MS), so every message travels on
//     wake-ups through the database (LISTEN/NOTIFY) alone. Single sends at BENCH_NODES_RATE (300) per second
//     for BENCH_NODES_SECONDS (10), each DLR webhook timed from the start of its send: p50, p99 and max.
//   throughput: for each count in BENCH_NODES_COUNTS (1,2), that many nodes of each role on a fresh schema,
//     single sends at saturation (BENCH_NODES_CONNECTIONS, 64, spread over the API nodes; with
//     BENCH_NODES_THROUGHPUT_RATE, at that rate in all instead) for BENCH_NODES_LOAD_SECONDS (10):
//     sends accepted per second, and DLR webhooks per second from the first send to the last webhook; after a
//     warm-up load of the same shape for BENCH_NODES_WARMUP_SECONDS (30; 0 measures from cold processes).
// BENCH_NODES_KINDS picks (latency,throughput). Exits non-zero when a message got no webhook or two.
// PostgreSQL: BENCH_PG_URL, else PG_TEST_URL, else the local `test` database; each round works in a schema of
// its own, dropped at its end.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createAccount } from '../test/helpers/cli.ts';
import { NodeGroup } from '../test/helpers/nodes.ts';
import { autocannon } from './autocannon.ts';
import { ProcessSampler } from './pipeline/measure.ts';
import { PostgresRound } from './pipeline/postgres.ts';

function setting(name: string, fallback: number, zero = false): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zero))
    throw new Error(`${name} must be a number ${zero ? '≥' : '>'} 0, not ${raw}`);
  return value;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** A round's world: its schema, the receiver's arrivals by destination, its nodes, an account and its token. */
interface Round {
  arrivals: Map<string, number[]>;
  nodes: NodeGroup;
  apiUrls: string[];
  token: string;
  /** PostgreSQL's side of the round: its backends' CPU and its statistics (the nodes' sessions only). */
  database: PostgresRound;
}

const sendBody = (number: string) =>
  JSON.stringify({
    sms: { message: { text: 'Nodes bench', pushtype: 'alert' }, recipients: { gsm: [{ value: number }] } },
  });

/**
 * Runs `body` against `count` nodes of each role on a fresh schema of `base`, with a DLR webhook to a receiver
 * in this process; removes everything afterwards. Undefined when PostgreSQL does not answer.
 */
async function withRound<T>(
  base: string,
  count: number,
  env: Record<string, string>,
  credits: number,
  body: (round: Round) => Promise<T>,
): Promise<T | undefined> {
  const probe = new pg.Client({ connectionString: base, connectionTimeoutMillis: 3000 });
  try {
    await probe.connect();
  } catch (error) {
    console.log(`skipped: PostgreSQL at ${base} does not answer (${(error as Error).message})`);
    return undefined;
  } finally {
    await probe.end().catch(() => {});
  }
  const database = new PostgresRound(base);
  const { databaseUrl } = database;

  const arrivals = new Map<string, number[]>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      try {
        const { destination } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { destination: string };
        const seen = arrivals.get(destination) ?? [];
        seen.push(at);
        arrivals.set(destination, seen);
      } catch {
        // Not a DLR body: not counted.
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/dlr`;

  const nodes = new NodeGroup({
    databaseUrl,
    env: {
      TRANSPORT: 'simulator',
      SIM_DLR_DELAY_MS: '0',
      SIM_OUTCOMES: 'DELIVRD=1',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_IP_RPS: '0',
      LOG_LEVEL: 'info',
      ...database.env,
      ...env,
    },
  });
  try {
    // One first, so the others find the schema migrated.
    const first = await nodes.start('api');
    const roles = [
      ...Array<'api'>(count - 1).fill('api'),
      ...Array<'delivery'>(count).fill('delivery'),
      ...Array<'webhooks'>(count).fill('webhooks'),
    ];
    const others = await nodes.startAll(roles);
    const apiUrls = [first, ...others.filter((n) => n.role === 'api')].map((n) => n.apiUrl!);
    const token = await createAccount(
      { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      'bench-nodes@example.com',
      credits,
    );
    const hook = await fetch(`${apiUrls[0]}/webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: { type: 'DLR', url: hookUrl } }),
    });
    if (((await hook.json()) as { status: number }).status !== 1) throw new Error('webhook not created');
    await database.connect();
    return await body({ arrivals, nodes, apiUrls, token, database });
  } finally {
    database.stopSampling();
    await nodes.killAll();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await database.drop();
  }
}

type CpuPerMessage = Record<'api' | 'delivery' | 'webhooks' | 'postgres', number>;

/**
 * Starts counting the CPU of each role's processes and of PostgreSQL's backends; the answer stops it and
 * divides by the messages given, with the statements and commits PostgreSQL's statistics show per message.
 */
async function measureCpu(nodes: NodeGroup, database: PostgresRound) {
  const byRole = (['api', 'delivery', 'webhooks'] as const).map((role) => ({
    role,
    sampler: new ProcessSampler(() => nodes.nodes.filter((n) => n.role === role).map((n) => n.pid)).start(),
  }));
  await database.start();
  return async (messages: number) => {
    const per = (seconds: number) => (seconds * 1000) / Math.max(1, messages);
    const cpu = Object.fromEntries(byRole.map(({ role, sampler }) => [role, per(sampler.stop().cpuSeconds)]));
    cpu.postgres = per(database.usage().backends.cpuSeconds);
    const stats = await database.finish(messages);
    let rowWrites = 0;
    let hotUpdates = 0;
    for (const t of Object.values(stats.tables)) {
      rowWrites += t.n_tup_ins + t.n_tup_upd + t.n_tup_del;
      hotUpdates += t.n_tup_hot_upd;
    }
    return {
      cpuMsPerMessage: cpu as CpuPerMessage,
      rowWritesPerMessage: rowWrites,
      hotUpdatesPerMessage: hotUpdates,
      statementsPerMessage: stats.perMessage.statements,
      commitsPerMessage: stats.perMessage.xact_commit,
    };
  };
}

const cpuLine = (m: Awaited<ReturnType<Awaited<ReturnType<typeof measureCpu>>>>) => {
  const c = m.cpuMsPerMessage;
  return (
    `  CPU per message: api ${c.api.toFixed(3)} + delivery ${c.delivery.toFixed(3)} + webhooks ${c.webhooks.toFixed(3)} ` +
    `+ PostgreSQL backends ${c.postgres.toFixed(3)} = ${(c.api + c.delivery + c.webhooks + c.postgres).toFixed(3)} ms; ` +
    `statements ${m.statementsPerMessage?.toFixed(1) ?? 'n/a'}, commits ${m.commitsPerMessage.toFixed(2)}, ` +
    `rows written ${m.rowWritesPerMessage.toFixed(1)} (HOT updates ${m.hotUpdatesPerMessage.toFixed(1)}) per message`
  );
};

/**
 * Waits up to `maxMs` for the DLR webhooks of `numbers`: of all of them, or of `expected` of them when some
 * may never have been sent (a load generator numbers a request it then cuts at the load's end, and that
 * number's webhook would be waited for until `maxMs`). Answers when the last one came, and how many had none
 * or more than one.
 */
async function awaitWebhooks(
  arrivals: Map<string, number[]>,
  numbers: Iterable<string>,
  maxMs: number,
  expected?: number,
) {
  const wanted = [...numbers];
  // At most this many may still lack a webhook; the list of those that do shrinks at each look.
  const allowed = Math.max(0, wanted.length - (expected ?? wanted.length));
  let waiting = wanted.filter((n) => !arrivals.has(n));
  const deadline = performance.now() + maxMs;
  while (performance.now() < deadline && waiting.length > allowed) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    waiting = waiting.filter((n) => !arrivals.has(n));
  }
  let last = 0;
  let missing = 0;
  let twice = 0;
  for (const number of wanted) {
    const seen = arrivals.get(number);
    if (!seen) missing++;
    else {
      if (seen.length > 1) twice++;
      last = Math.max(last, seen[0]);
    }
  }
  return { last, missing, twice };
}

/** One node of each role, paced single sends, each timed to its DLR webhook. Answers whether all arrived once. */
async function latency(base: string): Promise<boolean> {
  const rate = setting('BENCH_NODES_RATE', 300);
  const seconds = setting('BENCH_NODES_SECONDS', 10);
  const pollMs = setting('BENCH_NODES_POLL_MS', 60_000);
  const count = setting('BENCH_NODES_LATENCY_COUNT', 1);
  const ok = await withRound(
    base,
    count,
    { WORKER_POLL_MS: String(pollMs) },
    rate * seconds * 2,
    async ({ arrivals, apiUrls, token, nodes, database }) => {
      const started = new Map<string, number>();
      /** When each send's answer came back: the API's own queueing left out. */
      const accepted = new Map<string, number>();
      let refused = 0;
      const reasons = new Set<string>();
      const send = async (i: number) => {
        const number = `336${String(40_000_000 + i)}`;
        started.set(number, performance.now());
        const response = await fetch(`${apiUrls[i % apiUrls.length]}/send`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: sendBody(number),
        }).catch((error: Error) => {
          reasons.add(`request failed: ${error.message}`);
          return undefined;
        });
        const body = response
          ? ((await response.json()) as { status: number; message?: string; details?: string })
          : undefined;
        if (body && body.status !== 1)
          reasons.add(`HTTP ${response?.status}, ${body.status} ${body.details ?? body.message}`);
        if (body?.status !== 1) {
          refused++;
          started.delete(number);
        } else accepted.set(number, performance.now());
      };
      const total = Math.round(rate * seconds);
      const sends: Promise<void>[] = [];
      const measured = await measureCpu(nodes, database);
      const t0 = performance.now();
      // Paced on the wall clock: each tick sends what the rate owes since the start.
      await new Promise<void>((resolve) => {
        const tick = setInterval(() => {
          const owed = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
          while (sends.length < owed) sends.push(send(sends.length));
          if (sends.length >= total) {
            clearInterval(tick);
            resolve();
          }
        }, 5);
      });
      await Promise.all(sends);
      const sentIn = (performance.now() - t0) / 1000;
      const { missing, twice } = await awaitWebhooks(arrivals, started.keys(), 30_000);
      const cost = await measured(started.size);
      const latencies: number[] = [];
      const fromAnswer: number[] = [];
      for (const [number, at] of started) {
        const seen = arrivals.get(number);
        if (!seen) continue;
        latencies.push(seen[0] - at);
        fromAnswer.push(seen[0] - accepted.get(number)!);
      }
      latencies.sort((a, b) => a - b);
      fromAnswer.sort((a, b) => a - b);
      const ms = (v: number) => `${v.toFixed(1)} ms`;
      console.log(
        `latency: roles apart on PostgreSQL (${count} api, delivery and webhooks), polls ${pollMs} ms, simulator: ` +
          `${started.size} sends accepted at ${(started.size / sentIn).toFixed(0)}/s over ${sentIn.toFixed(1)} s` +
          (refused > 0 ? ` (${refused} refused: ${[...reasons].slice(0, 3).join('; ')})` : ''),
      );
      console.log(
        `  send → DLR webhook: p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, ` +
          `max ${ms(latencies.at(-1) ?? Number.NaN)} (target p99 < 1000 ms)`,
      );
      console.log(
        `  send answered → DLR webhook: p50 ${ms(percentile(fromAnswer, 50))}, p99 ${ms(percentile(fromAnswer, 99))}, ` +
          `max ${ms(fromAnswer.at(-1) ?? Number.NaN)}`,
      );
      console.log(`  bookkeeping: ${missing} without a webhook, ${twice} with two or more`);
      console.log(cpuLine(cost));
      return missing === 0 && twice === 0 && refused === 0;
    },
  );
  return ok !== false;
}

/**
 * `count` nodes of each role, single sends at saturation spread over the API nodes, then every webhook awaited.
 * Answers the figures, or undefined when PostgreSQL does not answer.
 */
async function throughput(base: string, count: number) {
  const seconds = setting('BENCH_NODES_LOAD_SECONDS', 10);
  // Unset: saturation. Set: that many sends a second in all, to compare CPU per message at one rate.
  const rate = process.env.BENCH_NODES_THROUGHPUT_RATE
    ? setting('BENCH_NODES_THROUGHPUT_RATE', 1)
    : undefined;
  // Spread over the API nodes: two API processes each write groups of sends half as large unless the clients
  // keep more sends in flight (BENCH_NODES_CONNECTIONS).
  const connections = setting('BENCH_NODES_CONNECTIONS', 64);
  // Each process starts cold: its code is compiled and optimized over its first tens of thousands of
  // messages, paid once per process, and two nodes of each role see half the messages each, so they warm up
  // half as fast. A warm-up load of the same shape goes first (its webhooks awaited, then left out of every
  // figure), long enough that the round measures what a node running for hours costs: at 300 sends/s one node
  // of each took 1.6 ms of CPU per message after 3 s of it, 0.9–1.2 ms after 30 s.
  const warmupSeconds = setting('BENCH_NODES_WARMUP_SECONDS', 30, true);
  return withRound(base, count, {}, 10_000_000, async ({ arrivals, apiUrls, token, nodes, database }) => {
    let next = 0;
    const load = (duration: number, numbers: string[]) =>
      Promise.all(
        apiUrls.map((url, a) =>
          autocannon({
            url: `${url}/send`,
            connections: Math.ceil(connections / apiUrls.length),
            ...(rate === undefined ? {} : { overallRate: rate / apiUrls.length }),
            duration,
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            requests: [
              {
                setupRequest: (request: Record<string, unknown>) => {
                  // Each API node numbers its own range: every message has a destination of its own.
                  const number = `336${String(40_000_000 + a * 5_000_000 + next++)}`;
                  numbers.push(number);
                  return { ...request, body: sendBody(number) };
                },
              },
            ],
          }),
        ),
      );
    if (warmupSeconds > 0) {
      const warmed: string[] = [];
      const warm = await load(warmupSeconds, warmed);
      await awaitWebhooks(
        arrivals,
        warmed,
        120_000,
        warm.reduce((sum, r) => sum + r['2xx'], 0),
      );
    }
    const numbers: string[] = [];
    // CPU from the load's start to the last webhook: each role's processes, and PostgreSQL's backends.
    const measured = await measureCpu(nodes, database);
    const t0 = performance.now();
    const results = await load(seconds, numbers);
    const loadSeconds = (performance.now() - t0) / 1000;
    const accepted = results.reduce((sum, r) => sum + r['2xx'], 0);
    const perApi = results.map((r) => r['2xx']);
    const failed = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
    // A request cut at the load's end may have been accepted: only the numbers with a webhook count as sent,
    // and every accepted send must have one.
    const { last, twice } = await awaitWebhooks(arrivals, numbers, 120_000, accepted);
    const cost = await measured(accepted);
    const delivered = numbers.filter((n) => arrivals.has(n)).length;
    const seconds2 = (last - t0) / 1000;
    return {
      count,
      connections,
      accepted,
      failed,
      perApi,
      acceptedPerSecond: accepted / loadSeconds,
      webhooksPerSecond: delivered / seconds2,
      lastWebhookSeconds: seconds2,
      missing: Math.max(0, accepted - delivered),
      twice,
      cost,
    };
  });
}

export async function run(): Promise<void> {
  const base =
    process.env.BENCH_PG_URL ?? process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const kinds = (process.env.BENCH_NODES_KINDS ?? 'latency,throughput').split(',').map((k) => k.trim());
  let failed = false;
  if (kinds.includes('latency')) failed = !(await latency(base)) || failed;
  if (kinds.includes('throughput')) {
    const counts = (process.env.BENCH_NODES_COUNTS ?? '1,2').split(',').map(Number);
    const rounds = [];
    for (const count of counts) {
      const round = await throughput(base, count);
      if (!round) return;
      rounds.push(round);
      console.log(
        `throughput: ${count} node(s) of each role, ${round.connections} connections over ${count} API node(s): ` +
          `${round.accepted} sends accepted (${round.acceptedPerSecond.toFixed(0)}/s; by API node ${round.perApi.join(' + ')}), ${round.failed} refused or failed; ` +
          `DLR webhooks ${round.webhooksPerSecond.toFixed(0)}/s, the last ${round.lastWebhookSeconds.toFixed(1)} s after the first send; ` +
          `${round.missing} accepted without a webhook, ${round.twice} with two or more`,
      );
      console.log(cpuLine(round.cost));
      if (round.missing > 0 || round.twice > 0) failed = true;
    }
    if (rounds.length >= 2) {
      const [one, ...more] = rounds;
      for (const r of more) {
        console.log(
          `  ${r.count} of each against 1 of each: accepted ${(r.acceptedPerSecond / one.acceptedPerSecond).toFixed(2)}×, ` +
            `webhooks ${(r.webhooksPerSecond / one.webhooksPerSecond).toFixed(2)}× (target ≥ 1.00×)`,
        );
      }
    }
  }
  if (failed) process.exitCode = 1;
}
