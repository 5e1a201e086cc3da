// Webhook deliveries per second on SQLite: 20,000 events already in the outbox, then the dispatcher (in
// this process, with the production settings: 8 requests in flight per webhook, 256 held in all) fans them
// out, POSTs each signed to a loopback receiver in a child process (so the receiver does not share this
// event loop), and records every attempt; timed from start until every delivery is recorded delivered.
//   (a) one webhook: 20,000 deliveries, at most 8 in flight;
//   (b) four webhooks of the same type on the same receiver: 5,000 events × 4 = 20,000 deliveries.
// Run: npm run bench -- webhooks    (BENCH_WEBHOOK_EVENTS changes the count).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import type { AuthContext } from '../src/shared/auth-context.ts';
import { dispatcherFromConfig } from '../src/webhooks/dispatch-policy.ts';

const total = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);

// The receiver: answers 200 with an empty body, counts requests and distinct webhook-ids, reports on SIGTERM.
const receiverSource = `
const http = require('node:http');
let requests = 0;
const ids = new Set();
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    requests++;
    ids.add(req.headers['webhook-id']);
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
process.on('SIGTERM', () => {
  process.stdout.write(JSON.stringify({ requests, distinct: ids.size }) + '\\n');
  process.exit(0);
});
`;

interface Receiver {
  child: ChildProcess;
  port: number;
  stop(): Promise<{ requests: number; distinct: number }>;
}

async function startReceiver(): Promise<Receiver> {
  const child = spawn(process.execPath, ['-e', receiverSource], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let waiting: ((line: string) => void) | undefined;
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (waiting) {
        waiting(line);
        waiting = undefined;
      } else lines.push(line);
    }
  });
  const nextLine = () =>
    new Promise<string>((resolve) => {
      const line = lines.shift();
      if (line !== undefined) resolve(line);
      else waiting = resolve;
    });
  const { port } = JSON.parse(await nextLine()) as { port: number };
  return {
    child,
    port,
    async stop() {
      const report = nextLine();
      child.kill('SIGTERM');
      return JSON.parse(await report) as { requests: number; distinct: number };
    },
  };
}

/** CPU time (user + system) a process has used, in ms, from /proc (clock ticks are 10 ms here). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function measure(label: string, webhookCount: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-bench-webhooks-'));
  const receiver = await startReceiver();
  const config = loadConfig({
    DATABASE_URL: join(dir, 'pigeon.db'),
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const deps = await createDeps(config, { logger: pino({ level: 'warn' }) });
  try {
    const { db } = deps.store;
    const account = await deps.services.accounts.createAccount({
      email: 'bench@example.com',
      password: 'bench-password',
      credits: 0,
    });
    // The webhooks are created through the service, as the API would for the account's own token.
    const auth: AuthContext = { accountId: Number(account.account_id), tokenId: 0, parentId: null };
    for (let i = 0; i < webhookCount; i++) {
      await deps.services.webhooks.create(auth, {
        type: 'DLR',
        url: `http://127.0.0.1:${receiver.port}/hook/${i}`,
        signature: 'bench-signature',
      });
    }
    const events = total / webhookCount;
    const now = Date.now();
    for (let start = 0; start < events; start += 500) {
      const rows = [];
      for (let i = start; i < Math.min(events, start + 500); i++) {
        rows.push({
          account_id: auth.accountId,
          campaign_id: 1,
          type: 'DLR',
          payload: JSON.stringify({
            date: '2026-01-05T10:00:00+01:00',
            status: 3,
            destination: `336${10_000_000 + i}`,
            message_id: `order-${i}`,
            campaign_id: '1',
            country_code: 'FR',
          }),
          created_at: now,
        });
      }
      await db.insertInto('events').values(rows).execute();
    }

    const dispatcher = dispatcherFromConfig({ ...deps, deliveries: deps.services.webhookDeliveries });
    // Done when no event waits for fan-out and no delivery is pending or being sent: each check reads a
    // small partial index, so polling costs the dispatcher nothing measurable.
    const done = async () => {
      if (dispatcher.held > 0) return false;
      const waiting = await db
        .selectFrom('events')
        .select('id')
        .where('fanned_out', '=', 0)
        .limit(1)
        .execute();
      const open = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('state', 'in', ['pending', 'sending'])
        .limit(1)
        .execute();
      return waiting.length === 0 && open.length === 0;
    };
    const countDelivered = async () => {
      const row = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('state', '=', 'delivered')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    const cpuBefore = process.cpuUsage();
    const receiverCpuBefore = cpuMsOf(receiver.child.pid!);
    const started = performance.now();
    dispatcher.start();
    const deadline = started + 300_000;
    do await new Promise((resolve) => setTimeout(resolve, 10));
    while (!(await done()) && performance.now() < deadline);
    const elapsedMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const receiverCpuMs = cpuMsOf(receiver.child.pid!) - receiverCpuBefore;
    await dispatcher.stop();
    const delivered = await countDelivered();
    const attempts = await db
      .selectFrom('webhook_attempts')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.avg<number>('latency_ms').as('latency')])
      .executeTakeFirstOrThrow();
    const received = await receiver.stop();
    const dispatcherCpuMs = (cpu.user + cpu.system) / 1000;
    console.log(
      `${label}: ${delivered} of ${total} delivered in ${Math.round(elapsedMs)} ms = ` +
        `${Math.round((delivered * 1000) / elapsedMs)} deliveries/s\n` +
        `    dispatcher process CPU ${Math.round((dispatcherCpuMs * 1000) / delivered)} µs per delivery ` +
        `(${Math.round((dispatcherCpuMs / elapsedMs) * 100)}% of one core); receiver ${Math.round((receiverCpuMs / elapsedMs) * 100)}%; ` +
        `attempts logged ${Number(attempts.n)} (mean request ${Number(attempts.latency).toFixed(1)} ms); receiver got ${received.requests} requests, ${received.distinct} distinct webhook-ids; ` +
        `load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
    );
  } finally {
    if (receiver.child.exitCode === null) receiver.child.kill('SIGKILL');
    await deps.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  await measure('(a) 1 webhook', 1);
  await measure('(b) 4 webhooks', 4);
}
