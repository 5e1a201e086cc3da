// `npm run bench -- nodes`: send → DLR webhook latency with the roles as separate processes on PostgreSQL,
// no supervisor between them (ROLE=api, ROLE=delivery, ROLE=webhooks, each started as its own command), the
// simulator as carrier (every message delivered, its receipt at once). Their polls are a minute apart
// (BENCH_NODES_POLL_MS), so every message travels on wake-ups through the database (LISTEN/NOTIFY) alone.
// Single sends at BENCH_NODES_RATE (300) per second for BENCH_NODES_SECONDS (10) through the API; a loopback
// receiver in this process times each DLR webhook from the start of its send. Prints p50, p99 and max; exits
// non-zero when a message got no webhook or two. PostgreSQL: BENCH_PG_URL, else PG_TEST_URL, else the local
// `test` database; it works in a schema of its own, dropped at the end.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { withAdvisoryLock } from '../src/store/db.ts';
import { createAccount } from '../test/helpers/cli.ts';
import { NodeGroup } from '../test/helpers/nodes.ts';

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a number > 0, not ${raw}`);
  return value;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

export async function run(): Promise<void> {
  const rate = setting('BENCH_NODES_RATE', 300);
  const seconds = setting('BENCH_NODES_SECONDS', 10);
  const pollMs = setting('BENCH_NODES_POLL_MS', 60_000);
  const base =
    process.env.BENCH_PG_URL ?? process.env.PG_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_nodes_${randomBytes(4).toString('hex')}`;
  const databaseUrl = `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;

  const probe = new pg.Client({ connectionString: base, connectionTimeoutMillis: 3000 });
  try {
    await probe.connect();
  } catch (error) {
    console.log(`skipped: PostgreSQL at ${base} does not answer (${(error as Error).message})`);
    return;
  } finally {
    await probe.end().catch(() => {});
  }

  // The receiver: each DLR webhook's arrival, by destination.
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

  const env = {
    TRANSPORT: 'simulator',
    SIM_DLR_DELAY_MS: '0',
    SIM_OUTCOMES: 'DELIVRD=1',
    WORKER_POLL_MS: String(pollMs),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_IP_RPS: '0',
  };
  const nodes = new NodeGroup({ databaseUrl, env: { ...env, LOG_LEVEL: 'info' } });
  let failed = false;
  try {
    // One first, so the others find the schema migrated.
    const api = await nodes.start('api');
    await nodes.startAll(['delivery', 'webhooks']);
    const token = await createAccount(
      { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      'bench-nodes@example.com',
      rate * seconds * 2,
    );
    const hook = await fetch(`${api.apiUrl}/webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ webhook: { type: 'DLR', url: hookUrl } }),
    });
    if (((await hook.json()) as { status: number }).status !== 1) throw new Error('webhook not created');

    const started = new Map<string, number>();
    /** When each send's answer came back: the API's own queueing left out. */
    const accepted = new Map<string, number>();
    let refused = 0;
    const reasons = new Set<string>();
    const send = async (i: number) => {
      const number = `336${String(40_000_000 + i)}`;
      started.set(number, performance.now());
      const response = await fetch(`${api.apiUrl}/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          sms: {
            message: { text: 'Nodes bench', pushtype: 'alert' },
            recipients: { gsm: [{ value: number }] },
          },
        }),
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
    // Every webhook, or 30 s at most.
    const deadline = performance.now() + 30_000;
    while (performance.now() < deadline && [...started.keys()].some((n) => !arrivals.has(n))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const latencies: number[] = [];
    const fromAnswer: number[] = [];
    let missing = 0;
    let twice = 0;
    for (const [number, at] of started) {
      const seen = arrivals.get(number);
      if (!seen) missing++;
      else {
        if (seen.length > 1) twice++;
        latencies.push(seen[0] - at);
        fromAnswer.push(seen[0] - accepted.get(number)!);
      }
    }
    latencies.sort((a, b) => a - b);
    fromAnswer.sort((a, b) => a - b);
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    console.log(
      `roles apart on PostgreSQL (api, delivery, webhooks), polls ${pollMs} ms, simulator: ` +
        `${started.size} sends accepted at ${(started.size / sentIn).toFixed(0)}/s over ${sentIn.toFixed(1)} s` +
        (refused > 0 ? ` (${refused} refused: ${[...reasons].slice(0, 3).join('; ')})` : ''),
    );
    console.log(
      `send → DLR webhook: p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, ` +
        `max ${ms(latencies.at(-1) ?? Number.NaN)} (target p99 < 1000 ms)`,
    );
    console.log(
      `send answered → DLR webhook: p50 ${ms(percentile(fromAnswer, 50))}, p99 ${ms(percentile(fromAnswer, 99))}, ` +
        `max ${ms(fromAnswer.at(-1) ?? Number.NaN)}`,
    );
    console.log(`bookkeeping: ${missing} without a webhook, ${twice} with two or more`);
    failed = missing > 0 || twice > 0 || refused > 0;
  } finally {
    await nodes.killAll();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await withAdvisoryLock(base, async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    });
  }
  if (failed) process.exitCode = 1;
}
