// The databases' own share of a message: the statements Pigeon runs for one single-part message of a
// campaign, from its insert to its DLR webhook's attempt, run back to back by one caller on batches of
// `BENCH_ROWS_BATCH` (500) messages, with nothing else (no HTTP, no SMPP, no webhook POST, no service logic).
// Each step is its own transaction, as in the server: insert; claim; submit (marked, parts written); receipt
// (parts looked up and updated, messages finalized, DLR events appended); fan-out (events taken, deliveries
// written leased, events marked); the attempt recorded (deliveries delivered, attempts written).
// On SQLite the engine runs in this process: its CPU is this process's. On PostgreSQL this process's CPU is
// the driver's and Kysely's side, and the backends' CPU is read from /proc (same machine only).
// Run: npm run bench -- rows   (BENCH_ROWS_DATABASES=sqlite,postgres; BENCH_ROWS_MESSAGES, BENCH_ROWS_ROUNDS;
// BENCH_PG_URL, else PG_TEST_URL, else the local server)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { messagePartsRepo } from '../src/delivery/message-parts.repo.ts';
import { messagesRepo } from '../src/delivery/messages.repo.ts';
import type { Executor, Store } from '../src/store/db.ts';
import { openStore } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { appendEvents } from '../src/store/outbox.ts';
import { webhookDeliveriesRepo } from '../src/webhooks/webhook-deliveries.repo.ts';
import { cpuMsOf } from './pipeline/measure.ts';
import { defaultPgUrl } from './pipeline/postgres.ts';

const messages = Number(process.env.BENCH_ROWS_MESSAGES ?? 50_000);
const batch = Number(process.env.BENCH_ROWS_BATCH ?? 500);
const rounds = Number(process.env.BENCH_ROWS_ROUNDS ?? 3);
const databases = (process.env.BENCH_ROWS_DATABASES || 'sqlite,postgres').split(',').map((d) => d.trim());
const pgUrl = process.env.BENCH_PG_URL || process.env.PG_TEST_URL || defaultPgUrl;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Database {
  store: Store;
  /** CPU of the database's own processes so far, in ms (0 on SQLite, whose engine is this process). */
  serverMs(): number;
  /** Looks up the database's processes again (a pool opens connections as it needs them). */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

async function open(kind: string): Promise<Database> {
  if (kind === 'postgres') {
    const schema = `bench_rows_${randomBytes(4).toString('hex')}`;
    const app = `pigeon-${schema}`;
    // The pool's connections, opened as they are needed, take their name from here (the `pg` driver).
    process.env.PGAPPNAME = app;
    const store = await openStore(`${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`);
    const admin = new pg.Client({ connectionString: pgUrl, application_name: 'pigeon-bench' });
    await admin.connect();
    let pids: number[] = [];
    return {
      store,
      serverMs: () => pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0),
      async refresh() {
        const { rows } = await admin.query<{ pid: number }>(
          'select pid from pg_stat_activity where application_name = $1',
          [app],
        );
        pids = rows.map((r) => r.pid);
      },
      async close() {
        await store.destroy();
        delete process.env.PGAPPNAME;
        await admin.query(`drop schema if exists ${schema} cascade`);
        await admin.end();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-bench-rows-'));
  const store = await openStore(join(dir, 'pigeon.db'));
  return {
    store,
    serverMs: () => 0,
    refresh: async () => {},
    async close() {
      await store.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** CPU per step over a round: this process's and the database's, in ms. */
type Steps = Map<string, { client: number; server: number }>;

/** One batch of messages through every step, each its own transaction; `first` numbers them. */
async function oneBatch(database: Database, steps: Steps, first: number, count: number, now: number) {
  const { db, dialect } = database.store;
  async function step<T>(name: string, work: (tx: Executor) => Promise<T>): Promise<T> {
    const client0 = cpuMs();
    const server0 = database.serverMs();
    const result = await db.transaction().execute(work);
    const spent = steps.get(name) ?? { client: 0, server: 0 };
    spent.client += cpuMs() - client0;
    spent.server += database.serverMs() - server0;
    steps.set(name, spent);
    return result;
  }
  const owner = 1;
  const rows: unknown[][] = [];
  for (let i = 0; i < count; i++) {
    const seq = first + i;
    rows.push([
      1,
      seq,
      1,
      `+3361${String(seq).padStart(7, '0')}`,
      null,
      null,
      'Hello, see you soon',
      1,
      'GSM',
      'queued',
      now,
      now,
      1,
    ]);
  }
  await step('insert', (tx) => messagesRepo.insertMessages(tx, rows));
  const claimed = await step('claim', (tx) => messagesRepo.claimDue(tx, dialect, now, 15_000, count, owner));
  const smscId = (id: number) => `s${id.toString(16)}`;
  await step('submit', async (tx) => {
    await messagesRepo.markSubmitted(
      tx,
      claimed.map((m) => ({
        id: Number(m.id),
        smscId: smscId(Number(m.id)),
        country: 'FR',
        owner,
        connector: 'smsc',
        route: null,
      })),
      now,
    );
    await messagePartsRepo.insertParts(
      tx,
      claimed.map((m) => ({ message_id: Number(m.id), part_no: 1, smsc_id: smscId(Number(m.id)) })),
      now,
    );
  });
  await step('receipt', async (tx) => {
    const parts = await messagePartsRepo.findOpenParts(
      tx,
      claimed.map((m) => smscId(Number(m.id))),
    );
    await messagePartsRepo.updateParts(
      tx,
      parts.map((p) => Number(p.id)),
      'DELIVRD',
      0,
      now,
    );
    await messagesRepo.finalizeMany(
      tx,
      parts.map((p) => Number(p.message_id)),
      'delivered',
      0,
      now,
    );
    await appendEvents(
      tx,
      parts.map((p) => ({
        account_id: 1,
        campaign_id: Number(p.campaign_id),
        type: 'DLR',
        payload: `{"message_id":${p.message_id},"status":0}`,
      })),
      now,
    );
  });
  const delivered = await step('fan-out', async (tx) => {
    const events = await webhookDeliveriesRepo.eventsToFanOut(tx, dialect, count);
    const ids = events.map((e) => Number(e.id));
    const leased = await webhookDeliveriesRepo.insertFanOutLeased(tx, ids, now, {
      owner,
      leaseUntil: now + 15_000,
    });
    await webhookDeliveriesRepo.markFannedOut(tx, ids);
    return leased;
  });
  await step('attempt', async (tx) => {
    await webhookDeliveriesRepo.markDelivered(
      tx,
      delivered.map((d) => Number(d.id)),
      owner,
      now,
    );
    await webhookDeliveriesRepo.insertAttempts(
      tx,
      delivered.map((d) => ({
        webhook_id: Number(d.webhook_id),
        delivery_id: Number(d.id),
        event_id: d.event_id === null ? null : Number(d.event_id),
        event_type: d.event_type,
        attempt: 1,
        http_code: 200,
        error: null,
        latency_ms: 3,
        attempted_at: now,
        next_attempt_at: null,
        request_headers: '{}',
        request_body: '{}',
        response_body: '',
      })),
    );
  });
}

interface Round {
  client: number;
  server: number;
  steps: Steps;
}

async function runDatabase(kind: string): Promise<Round[]> {
  const database = await open(kind);
  const { store } = database;
  const results: Round[] = [];
  try {
    await migrate(store);
    const now = Date.now();
    await sql`insert into accounts (id, email, password_hash, created_at)
      values (1, 'rows@example.com', 'x', ${now})`.execute(store.db);
    await sql`insert into campaigns (id, account_id, billed_account_id, sender, text, pushtype, unicode, cost,
        total, sent, blacklisted, duplicated, invalid, npai, not_allowed, status, due_at, created_at)
      values (1, 1, 1, 'Pigeon', 'Hello', 'marketing', 0, 0, 0, 0, 0, 0, 0, 0, 0, 'sent', ${now}, ${now})`.execute(
      store.db,
    );
    await sql`insert into webhooks (account_id, type, url, secret, status, created_at, updated_at)
      values (1, 'DLR', 'http://127.0.0.1:9/', 'secret', 'live', ${now}, ${now})`.execute(store.db);
    let next = 1;
    const run = async (count: number, steps: Steps) => {
      for (let done = 0; done < count; done += batch) {
        await oneBatch(database, steps, next, Math.min(batch, count - done), now);
        next += batch;
      }
    };
    // Warm-up: the code optimized, the statements prepared, the tables' first statistics taken.
    await run(Math.min(messages, 20_000), new Map());
    if (kind === 'postgres') await sql`analyze`.execute(store.db);
    for (let r = 0; r < rounds; r++) {
      await database.refresh();
      const steps: Steps = new Map();
      await run(messages, steps);
      const sum = (side: 'client' | 'server') =>
        [...steps.values()].reduce((t, x) => t + x[side], 0) / messages;
      results.push({ client: sum('client'), server: sum('server'), steps });
    }
  } finally {
    await database.close();
  }
  return results;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const us = (ms: number) => Math.round((ms * 1000) / messages);

export async function run(): Promise<void> {
  console.log(
    `rows: ${messages} messages per round in batches of ${batch}, ${rounds} rounds per database (${databases.join(', ')}); CPU per message`,
  );
  const medians = new Map<string, number>();
  for (const kind of databases) {
    const results = await runDatabase(kind);
    for (const [i, r] of results.entries()) {
      const split = [...r.steps]
        .map(([name, x]) => `${name} ${us(x.client)}${kind === 'postgres' ? `+${us(x.server)}` : ''}`)
        .join(', ');
      const total =
        kind === 'postgres'
          ? `this process ${r.client.toFixed(3)} + backends ${r.server.toFixed(3)} = ${(r.client + r.server).toFixed(3)} ms`
          : `${r.client.toFixed(3)} ms`;
      console.log(`  ${kind} round ${i + 1}: ${total}; per step, µs: ${split}`);
    }
    const total = median(results.map((r) => r.client + r.server));
    medians.set(kind, total);
    console.log(`  ${kind}: median ${total.toFixed(3)} ms per message`);
  }
  if (medians.has('sqlite') && medians.has('postgres')) {
    console.log(
      `  PostgreSQL / SQLite: ${(medians.get('postgres')! / medians.get('sqlite')!).toFixed(2)}× the CPU for the same statements and rows`,
    );
  }
}
