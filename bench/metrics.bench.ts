// The cost of metrics. A scrape of /metrics on a database of realistic size (by default 1,000,000 messages of
// which 20,000 queued, 2,000 awaiting their receipt and 10,000 finished in the last hour; 200,000 finished
// webhook deliveries and 2,000 pending; 100,000 folded clicks): the whole answer as GET /metrics builds it, and
// its database reads alone, median and worst of `rounds`; then what the observers on the hot paths cost per
// call (an API request's counter and histogram, a submit and its receipt), against the same loop empty.
// Run: npm run bench -- metrics    (BENCH_METRICS_MESSAGES changes the table's size; BENCH_METRICS_DATABASE_URL
// runs it on PostgreSQL, e.g. postgres://postgres@127.0.0.1:5432/test?schema=bench_metrics, dropped after).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createDeps, type Deps } from '../src/deps.ts';

const messages = Number(process.env.BENCH_METRICS_MESSAGES ?? 1_000_000);
const rounds = 30;
const hotCalls = 1_000_000;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value: number) => `${value.toFixed(2)} ms`;

/** `count` rows from a recursive series, in statements of 100,000 (both dialects). */
async function fill(deps: Deps, count: number, insert: (from: number, to: number) => ReturnType<typeof sql>) {
  for (let from = 1; from <= count; from += 100_000) {
    await insert(from, Math.min(count, from + 99_999)).execute(deps.store.db);
  }
}

async function seed(deps: Deps): Promise<void> {
  const now = Date.now();
  const { account_id } = await deps.services.accounts.createAccount({
    email: 'bench@example.com',
    password: 'bench password',
    credits: 0,
  });
  const accountId = Number(account_id);
  await sql`insert into campaigns (account_id, billed_account_id, sender, text, pushtype, unicode, cost, total,
      sent, blacklisted, duplicated, invalid, npai, not_allowed, status, due_at, created_at)
    values (${accountId}, ${accountId}, null, 'Bench', 'alert', 0, 0, 0, 0, 0, 0, 0, 0, 0, 'done', ${now}, ${now})`.execute(
    deps.store.db,
  );
  const series = (from: number, to: number) =>
    sql`with recursive n(i) as (select ${sql.lit(from)} union all select i + 1 from n where i < ${sql.lit(to)})`;
  // States by position: the last 10,000 finished within the hour; 20,000 queued; 2,000 submitted; the rest
  // finished over the past 30 days (97 % delivered).
  const queued = 20_000;
  const submitted = 2_000;
  const recent = 10_000;
  await fill(deps, messages, (from, to) => {
    const state = sql`case when i <= ${sql.lit(queued)} then 'queued'
      when i <= ${sql.lit(queued + submitted)} then 'submitted'
      when i % 100 < 3 then 'failed' else 'delivered' end`;
    const dueAt = sql`case when i > ${sql.lit(messages - recent)} then ${sql.lit(now)} - (i % 3600) * 1000
      else ${sql.lit(now - 3_700_000)} - (i % 2592000) * 1000 end`;
    return sql`${series(from, to)} insert into messages (campaign_id, seq, account_id, recipient, gsmsmsid,
        contact_id, text, parts, encoding, state, due_at, lease_until, smsc_id, dlr_status, updated_at, error)
      select 1, i, ${sql.lit(accountId)}, '33612345678', null, null, 'Bench message text', 1, 'gsm7',
        ${state}, ${dueAt}, null, null, null, ${sql.lit(now)}, null from n`;
  });
  await sql`insert into webhooks (account_id, type, url, signature, secret, status, last_http_code, failing_since,
      created_at, updated_at) values (${accountId}, 'DLR', 'https://example.com/dlr', null, 'whsec_bench', 'live',
      200, null, ${now}, ${now})`.execute(deps.store.db);
  await fill(deps, 202_000, (from, to) => {
    const state = sql`case when i <= 2000 then 'pending' else 'delivered' end`;
    return sql`${series(from, to)} insert into webhook_deliveries (webhook_id, account_id, event_id, event_type,
        payload, state, attempts, next_attempt_at, lease_until, created_at, updated_at)
      select 1, ${sql.lit(accountId)}, null, 'DLR', '{}', ${state}, 1, ${sql.lit(now)} - i * 10, null,
        ${sql.lit(now)} - i * 10, ${sql.lit(now)} from n`;
  });
  await sql`insert into links (code, campaign_id, message_seq, account_id, long_url, clicks, created_at)
    values ('benchcode01', 1, 1, ${accountId}, 'https://example.com', 0, ${now})`.execute(deps.store.db);
  await fill(deps, 100_000, (from, to) => {
    return sql`${series(from, to)} insert into clicks (link_id, campaign_id, account_id, message_seq, clicked_at,
        user_agent, referer, ip) select 1, 1, ${sql.lit(accountId)}, 1, ${sql.lit(now)} - i, null, null, null from n`;
  });
  await sql`update cursors set position = (select max(id) from clicks) where name = 'clicks'`.execute(
    deps.store.db,
  );
  if (deps.store.dialect === 'postgres') await sql`analyze`.execute(deps.store.db);
}

/** Nanoseconds per call of `body`, less the same loop with an empty body. */
function perCallNs(body: (i: number) => void): number {
  const time = (fn: (i: number) => void) => {
    const started = performance.now();
    for (let i = 0; i < hotCalls; i++) fn(i);
    return performance.now() - started;
  };
  const empty = median([1, 2, 3].map(() => time(() => {})));
  const full = median([1, 2, 3].map(() => time(body)));
  return ((full - empty) * 1e6) / hotCalls;
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-bench-metrics-'));
  const databaseUrl = process.env.BENCH_METRICS_DATABASE_URL ?? join(dir, 'pigeon.db');
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' });
  const deps = await createDeps(config, { logger: pino({ level: 'warn' }) });
  try {
    const seedStarted = performance.now();
    await seed(deps);
    console.log(
      `metrics: ${deps.store.dialect}, ${messages.toLocaleString('en')} messages, 202,000 webhook deliveries, ` +
        `100,000 clicks (seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`,
    );
    const ops = deps.ops;
    const sources = {
      messages: () => deps.services.delivery.queueStates(Date.now(), Date.now() - 3_600_000),
      webhooks: () => deps.services.webhookDeliveries.backlog(Date.now()),
      clicks: () => deps.services.clickFold.oldestUnfoldedAt(),
    };
    const timed = async (fn: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const started = performance.now();
        await fn();
        times.push(performance.now() - started);
      }
      return times;
    };
    // Warm: the statements compiled, the pages in the cache, as at the second scrape of a running server.
    await ops.metricsAnswer(undefined);
    const scrape = await timed(() => ops.metricsAnswer(undefined));
    const size = (await ops.metricsAnswer(undefined)).body.length;
    console.log(
      `  one scrape (GET /metrics answer, ${size.toLocaleString('en')} bytes): median ${ms(median(scrape))}, worst ${ms(Math.max(...scrape))}`,
    );
    for (const [name, read] of Object.entries(sources)) {
      const times = await timed(read);
      console.log(`    of which ${name}: median ${ms(median(times))}, worst ${ms(Math.max(...times))}`);
    }

    const observers = ops.metrics!;
    const routes = ['/send', '/campaign/:ticket', '/credits'];
    const http = perCallNs((i) => observers.http.answered(routes[i % 3], 'POST', 200, 0.002));
    const submit = perCallNs((i) => {
      observers.delivery.submitted({ ok: true, smscId: String(i) }, 0.001);
      observers.delivery.receipt({ smscId: String(i), stat: 'DELIVRD' });
    });
    console.log(`  per API request (counter + histogram): ${http.toFixed(0)} ns`);
    console.log(`  per message (submit counted and timed, its receipt timed): ${submit.toFixed(0)} ns`);
  } finally {
    if (deps.store.dialect === 'postgres' && deps.store.schema) {
      await sql`drop schema ${sql.id(deps.store.schema)} cascade`.execute(deps.store.db);
    }
    await deps.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
