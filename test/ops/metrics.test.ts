// GET /metrics: the Prometheus exposition parses strictly, every process series carries its role and bounded
// labels (route patterns, never URLs), the queue gauges read from the database follow a campaign from queued
// to delivered, the SMPP series follow the binds, METRICS_TOKEN guards the scrape, METRICS_PORT serves it
// (a worker process without the API), and under the supervisor the API process answers for every process.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAlertWorker } from '../../src/accounts/alert-worker.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { SimulatorTransport } from '../../src/delivery/simulator/simulator-transport.ts';
import { SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import type { App } from '../../src/http/types.ts';
import { closeLinkServer, createLinkServer } from '../../src/links/link-server.ts';
import { buildApi, type Running, startRuntime } from '../../src/runtime.ts';
import { openStore } from '../../src/store/db.ts';
import { dispatcherFromConfig } from '../../src/webhooks/dispatch-policy.ts';
import { pigeonBin as bin, createAccount } from '../helpers/cli.ts';
import {
  availableDialects,
  call,
  createHarness,
  describeEachDialect,
  type Harness,
} from '../helpers/harness.ts';
import { type Family, parseExposition, sampleValue } from '../helpers/prometheus-text.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };

async function scrape(app: App, token?: string): Promise<Map<string, Family>> {
  const res = await app.inject({
    method: 'GET',
    url: '/metrics',
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(res.body);
}

describeEachDialect(
  'metrics',
  (h) => {
    let app: App;
    const stops: (() => Promise<void>)[] = [];

    beforeAll(async () => {
      app = buildApi(h().deps);
      await app.ready();
    });
    afterAll(async () => {
      await app.close();
    });
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    });

    async function send(token: string, numbers: string[], delay?: string) {
      const res = await call(app, 'POST', '/send', {
        token,
        json: {
          sms: {
            message: { text: 'Metrics', pushtype: 'alert', ...(delay ? { delay } : {}) },
            recipients: { gsm: numbers.map((value) => ({ value })) },
          },
        },
      });
      expect(res.body.status).toBe(1);
      return res.body.ticket as string;
    }

    it('a scrape parses strictly: process series carry role="all", the database gauges carry none', async () => {
      const families = await scrape(app);
      for (const name of [
        'http_requests_total',
        'pigeon_db_pool_open_connections',
        'pigeon_sends_accepted_total',
      ]) {
        expect(families.has(name), name).toBe(true);
      }
      for (const sample of families.get('pigeon_db_pool_open_connections')!.samples) {
        expect(sample.labels.role).toBe('all');
      }
      expect(sampleValue(families, 'pigeon_database_up')).toBe(1);
      expect(families.get('pigeon_messages')!.samples.every((s) => s.labels.role === undefined)).toBe(true);
      expect(families.get('pigeon_messages')!.type).toBe('gauge');
      expect(families.get('http_request_duration_seconds')!.type).toBe('histogram');
    });

    it('HTTP requests are counted by route pattern, method and status, never by URL', async () => {
      const a = await h().account({ credits: 100 });
      // Scheduled for next year: it stays queued, out of the way of the tests below.
      const ticket = await send(a.token, ['33612345601'], '2027-01-05 10:00:00');
      await call(app, 'GET', `/campaign/${ticket}`, { token: a.token });
      const families = await scrape(app);
      const labels = { route: '/campaign/:ticket', method: 'GET', status_code: '200', role: 'all' };
      expect(sampleValue(families, 'http_requests_total', labels)).toBeGreaterThanOrEqual(1);
      expect(sampleValue(families, 'http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(1);
      const routes = families.get('http_requests_total')!.samples.map((s) => s.labels.route);
      expect(routes).toContain('/send');
      expect(routes.some((route) => route.includes(ticket) || route.includes('?'))).toBe(false);
    });

    it('the queue gauges follow a campaign: queued, then due, then sent, then delivered', async () => {
      const a = await h().account({ credits: 100 });
      const gauge = async (state: string) => sampleValue(await scrape(app), 'pigeon_messages', { state });
      const before = await scrape(app);
      const accepted = sampleValue(before, 'pigeon_messages_accepted_total') ?? 0;
      const queuedBefore = sampleValue(before, 'pigeon_messages', { state: 'queued' }) ?? 0;
      const delivered = sampleValue(before, 'pigeon_messages', { state: 'delivered' }) ?? 0;
      expect(sampleValue(before, 'pigeon_messages', { state: 'due' })).toBe(0);
      // The manual clock reads 10:00 in Paris: an hour later, the messages are queued and not yet due.
      await send(a.token, ['33612345611', '33612345612', '33612345613'], '2026-01-05 11:00:00');
      const queued = await scrape(app);
      expect(sampleValue(queued, 'pigeon_messages', { state: 'queued' })).toBe(queuedBefore + 3);
      expect(sampleValue(queued, 'pigeon_messages', { state: 'due' })).toBe(0);
      expect(sampleValue(queued, 'pigeon_messages_accepted_total')).toBe(accepted + 3);
      h().clock.advance(3_600_000);
      expect(await gauge('queued')).toBe(queuedBefore);
      expect(await gauge('due')).toBe(3);

      // Receipts 1.5 s after each submit: long enough for a scrape to see the messages sent, not delivered.
      const transport = new SimulatorTransport({
        dlrDelayMs: 1500,
        outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }],
      });
      const worker: DeliveryWorker = createDeliveryWorker({
        delivery: h().deps.services.delivery,
        replies: h().deps.services.replies,
        transport,
        clock: h().clock,
        log: quiet,
        metrics: h().deps.ops.metrics?.delivery,
        options: {
          batchSize: 50,
          pollMs: 10,
          validityMs: 48 * 3_600_000,
          retryBaseMs: 0,
          retryMaxMs: 0,
          sweepMs: 20,
        },
      });
      await worker.start();
      stops.push(() => worker.stop());
      await waitFor(async () => (await gauge('sent')) === 3, 'three messages sent, receipts awaited');
      expect(await gauge('due')).toBe(0);
      await waitFor(async () => (await gauge('delivered')) === delivered + 3, 'three messages delivered');
      const after = await scrape(app);
      expect(sampleValue(after, 'pigeon_messages', { state: 'sent' })).toBe(0);
      expect(sampleValue(after, 'pigeon_delivery_submits_total', { outcome: 'accepted' })).toBe(3);
      expect(
        sampleValue(after, 'pigeon_delivery_submit_duration_seconds_count', { connector: 'default' }),
      ).toBe(3);
      // Each receipt came about 1.5 s after its submit.
      const receipts = sampleValue(after, 'pigeon_delivery_receipt_delay_seconds_count', {
        connector: 'default',
      });
      expect(receipts).toBe(3);
      expect(
        sampleValue(after, 'pigeon_delivery_receipt_delay_seconds_bucket', { connector: 'default', le: '1' }),
      ).toBe(0);
    });

    it('the webhook backlog counts events not yet fanned out, with the age of the oldest, overdue since written', async () => {
      const a = await h().account({ credits: 100 });
      const hook = await call(app, 'POST', '/webhook', {
        token: a.token,
        json: { webhook: { type: 'DLR', url: 'http://127.0.0.1:9/dlr' } },
      });
      expect(hook.body.status).toBe(1);
      const waiting = (await scrape(app)).get('pigeon_webhook_backlog')!;
      const eventsBefore = waiting.samples.find((s) => s.labels.state === 'events')!.value;
      // A delivered message writes its DLR event; no dispatcher runs here to fan it out.
      await send(a.token, ['33612345621']);
      const worker = testDeliveryWorker(h(), deliveringSimulator(), {}, quiet);
      await worker.start();
      stops.push(() => worker.stop());
      await waitFor(
        async () =>
          sampleValue(await scrape(app), 'pigeon_webhook_backlog', { state: 'events' }) === eventsBefore + 1,
        'the DLR event waiting for the dispatcher',
      );
      h().clock.advance(90_000);
      const families = await scrape(app);
      expect(sampleValue(families, 'pigeon_webhook_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(90);
      // An event waits to be fanned out while dispatchers have no room: it was due when it was written.
      expect(sampleValue(families, 'pigeon_webhook_overdue_seconds')).toBeGreaterThanOrEqual(90);
    });

    it('the SMPP series follow the binds: binds up, window size, throttling, reconnects', async () => {
      const smsc = await new TestSmsc({ refuse: { status: 0x58, count: 1 } }).listen();
      stops.push(() => smsc.close());
      const observers = h().deps.ops.metrics!;
      const transport = new SmppTransport(
        {
          url: smsc.url,
          binds: 2,
          window: 5,
          tps: 0,
          enquireLinkMs: 30_000,
          responseTimeoutMs: 5_000,
          reconnectMinMs: 20,
          reconnectMaxMs: 100,
          backpressureRetries: 3,
        },
        quiet,
        observers.smpp,
      );
      h().deps.ops.watchTransport(transport);
      const worker = createDeliveryWorker({
        delivery: h().deps.services.delivery,
        replies: h().deps.services.replies,
        transport,
        clock: h().clock,
        log: quiet,
        metrics: observers.delivery,
        options: {
          batchSize: 50,
          pollMs: 10,
          validityMs: 48 * 3_600_000,
          retryBaseMs: 0,
          retryMaxMs: 0,
          sweepMs: 20,
        },
      });
      await worker.start();
      stops.push(() => worker.stop());
      const value = async (name: string) => sampleValue(await scrape(app), name, { connector: 'default' });
      await waitFor(async () => (await value('pigeon_smpp_binds_up')) === 2, 'both binds up');
      expect(await value('pigeon_smpp_binds')).toBe(2);
      expect(await value('pigeon_smpp_window_size')).toBe(10);
      const reconnects = (await value('pigeon_smpp_reconnects_total')) ?? 0;

      const a = await h().account({ credits: 100 });
      await send(a.token, ['33612345631']);
      // The first submit is answered ESME_RTHROTTLED, then accepted on the retry.
      await waitFor(async () => smsc.submits.length === 1, 'the submit after the throttled one');
      await waitFor(async () => (await value('pigeon_smpp_throttled_total')) === 1, 'one throttling event');
      await waitFor(async () => (await value('pigeon_smpp_window_in_use')) === 0, 'the window empty');
      // A submit the SMSC has not answered holds a slot of the window until it does.
      smsc.holdResponses = true;
      await send(a.token, ['33612345632']);
      await waitFor(async () => (await value('pigeon_smpp_window_in_use')) === 1, 'one submit in the window');
      smsc.holdResponses = false;
      smsc.release();
      await waitFor(async () => (await value('pigeon_smpp_window_in_use')) === 0, 'the window empty again');

      smsc.dropAll();
      await waitFor(
        async () => ((await value('pigeon_smpp_reconnects_total')) ?? 0) >= reconnects + 2,
        'both binds counted as reconnecting',
      );
      await waitFor(async () => (await value('pigeon_smpp_binds_up')) === 2, 'both binds up again');
    });

    /** A delivery worker on the simulator, every message delivered at once; stopped after the test. */
    async function deliver(): Promise<void> {
      const worker = testDeliveryWorker(h(), deliveringSimulator(), {}, quiet);
      await worker.start();
      stops.push(() => worker.stop());
    }

    it('webhook attempts are counted by outcome: each DLR a receiver takes with a 2xx moves outcome="success"', async () => {
      const receiver = await new WebhookReceiver().listen();
      stops.push(() => receiver.close());
      const a = await h().account({ credits: 100 });
      const hook = await call(app, 'POST', '/webhook', {
        token: a.token,
        json: { webhook: { type: 'DLR', url: receiver.url('/dlr') } },
      });
      expect(hook.body.status).toBe(1);
      const success = (families: Map<string, Family>) =>
        sampleValue(families, 'pigeon_webhook_deliveries_total', { outcome: 'success', role: 'all' }) ?? 0;
      const before = success(await scrape(app));
      const dispatcher = dispatcherFromConfig({
        config: h().config,
        deliveries: h().deps.services.webhookDeliveries,
        urlGuard: h().deps.urlGuard,
        clock: h().clock,
        logger: h().deps.logger,
        metrics: h().deps.ops.metrics?.webhooks,
      });
      dispatcher.start();
      stops.push(() => dispatcher.stop());
      await deliver();
      await send(a.token, ['33612345641', '33612345642']);
      await waitFor(
        async () => success(await scrape(app)) === before + 2,
        'two DLR webhooks counted as delivered',
      );
      expect(receiver.requests.filter((r) => r.path === '/dlr')).toHaveLength(2);
      // The family carries only its bounded outcome words.
      const outcomes = (await scrape(app))
        .get('pigeon_webhook_deliveries_total')!
        .samples.map((s) => s.labels.outcome);
      expect(outcomes.every((o) => ['success', 'retry', 'failed'].includes(o))).toBe(true);
    });

    it('the click fold lag is the age of the oldest click not yet counted, and 0 once the fold has counted it', async () => {
      const lag = async () => sampleValue(await scrape(app), 'pigeon_click_fold_lag_seconds');
      // Up to date: 0, one series without a role (read from the database by the process scraped).
      expect(await lag()).toBe(0);
      expect((await scrape(app)).get('pigeon_click_fold_lag_seconds')!.samples[0].labels).toEqual({});
      const a = await h().account({ credits: 100 });
      const sent = await call(app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Offer <-short->', pushtype: 'alert', links: ['https://shop.example/lag'] },
            recipients: { gsm: [{ value: '33612345651' }] },
          },
        },
      });
      expect(sent.body.status).toBe(1);
      const link = await h()
        .deps.store.db.selectFrom('links')
        .select('code')
        .where('campaign_id', '=', Number(sent.body.ticket))
        .executeTakeFirstOrThrow();
      // A click through the real redirect server; no click folder runs here, so it waits uncounted.
      const server = createLinkServer(h().deps);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      stops.push(() => closeLinkServer(server, h().deps.services.links));
      const { port } = server.address() as { port: number };
      const redirect = await fetch(`http://127.0.0.1:${port}/${link.code}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile Safari/537.36' },
      });
      expect(redirect.status).toBe(302);
      h().clock.advance(30_000);
      expect(await lag()).toBe(30);
      expect(await h().deps.services.clickFold.foldClicks(100)).toBe(1);
      expect(await lag()).toBe(0);
    });

    it('balance alert jobs are counted by kind and outcome: the SMS queued as sent, the e-mail without SMTP failed', async () => {
      const jobs = (families: Map<string, Family>, kind: string, outcome: string) =>
        sampleValue(families, 'pigeon_alert_jobs_total', { kind, outcome, role: 'all' }) ?? 0;
      const before = await scrape(app);
      const a = await h().account({ credits: 10 });
      const notified = await call(app, 'PUT', '/notification/balance', {
        token: a.token,
        json: {
          notification: {
            alert_trigger: '9',
            alert_email: '1',
            alert_gsm: '1',
            email: 'alerts@example.com',
            phone_number: '33612345661',
          },
        },
      });
      expect(notified.body.status, notified.body.details).toBe(1);
      // Ten credits, two spent: the balance crosses the trigger of 9 and the alert's two jobs are written.
      await send(a.token, ['33612345662', '33612345663']);
      const worker = createAlertWorker({
        alerts: h().deps.services.balanceAlerts,
        mailer: undefined,
        log: quiet,
        options: { pollMs: 10, batchSize: 10, sweepMs: 20 },
        metrics: h().deps.ops.metrics?.alerts,
      });
      worker.start();
      stops.push(() => worker.stop());
      const after = await waitFor(async () => {
        const families = await scrape(app);
        return jobs(families, 'sms', 'sent') === jobs(before, 'sms', 'sent') + 1 &&
          jobs(families, 'email', 'failed') === jobs(before, 'email', 'failed') + 1
          ? families
          : undefined;
      }, 'the alert SMS queued and the e-mail failed, both counted');
      expect(after.get('pigeon_alert_jobs_total')!.type).toBe('counter');
    });

    it('the event-loop lag series are there once the process metrics run, labelled with the role', async () => {
      expect((await scrape(app)).has('nodejs_eventloop_lag_seconds')).toBe(false);
      // What every running process does at start (startRuntime).
      h().deps.ops.startProcessMetrics();
      const families = await scrape(app);
      for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
        const value = sampleValue(families, name, { role: 'all' });
        expect(value, name).toBeGreaterThanOrEqual(0);
        expect(families.get(name)!.type, name).toBe('gauge');
      }
    });
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);

for (const dialect of availableDialects()) {
  describe(`metrics access [${dialect}]`, () => {
    const harnesses: Harness[] = [];
    const runnings: Running[] = [];
    afterAll(async () => {
      for (const r of runnings) await r.stop();
      for (const harness of harnesses.reverse()) await harness.close();
    });

    async function appWith(env: Record<string, string>): Promise<{ h: Harness; app: App }> {
      const h = await createHarness(dialect, env);
      harnesses.push(h);
      const app = buildApi(h.deps);
      await app.ready();
      harnesses.push({ close: () => app.close() } as Harness);
      return { h, app };
    }

    it('with METRICS_TOKEN, GET /metrics answers 401 without the bearer token or with another, 200 with it', async () => {
      const token = 'scrape-token-0123456789';
      const { app } = await appWith({ METRICS_TOKEN: token });
      const none = await call(app, 'GET', '/metrics');
      expect(none.httpCode).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer');
      expect(none.body).toMatchObject({ status: -1, message: 'Authentication error' });
      expect((await call(app, 'GET', '/metrics', { token: `${token}x` })).httpCode).toBe(401);
      expect((await call(app, 'GET', '/metrics', { headers: { authorization: token } })).httpCode).toBe(401);
      await scrape(app, token);
      // Health and readiness stay open: a load balancer has no token.
      expect((await call(app, 'GET', '/health')).httpCode).toBe(200);
      expect((await call(app, 'GET', '/ready')).httpCode).toBe(200);
    });

    it('with METRICS=off there is no /metrics (not found), and /health and /ready still answer', async () => {
      const { h, app } = await appWith({ METRICS: 'off' });
      expect(h.deps.ops.metrics).toBeUndefined();
      const res = await call(app, 'GET', '/metrics');
      expect(res.body.status).toBe(-5);
      expect((await call(app, 'GET', '/health')).httpCode).toBe(200);
      expect((await call(app, 'GET', '/ready')).httpCode).toBe(200);
    });

    it('METRICS_PORT serves /metrics, /health and /ready for a worker process with no API, and the API port no longer does', async () => {
      const { h, app } = await appWith({
        ROLE: 'webhooks',
        METRICS_PORT: '0',
        METRICS_TOKEN: 'port-token-0123456789',
      });
      const running = await startRuntime(h.deps);
      runnings.push(running);
      expect(running.apiUrl).toBeUndefined();
      const url = running.metricsUrl!;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const ready = await fetch(`${url}/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 1, checks: { database: 'ok', migrations: 'ok' } });
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      const scraped = await fetch(`${url}/metrics`, {
        headers: { authorization: 'Bearer port-token-0123456789' },
      });
      expect(scraped.status).toBe(200);
      const families = parseExposition(await scraped.text());
      expect(sampleValue(families, 'pigeon_db_pool_open_connections', { role: 'webhooks' })).toBeGreaterThan(
        0,
      );
      expect(sampleValue(families, 'pigeon_database_up')).toBe(1);
      const missing = await fetch(`${url}/nothing`);
      expect(missing.status).toBe(200);
      expect(((await missing.json()) as { status: number }).status).toBe(-5);
      // Served there instead of on the API's port.
      expect((await call(app, 'GET', '/metrics')).body.status).toBe(-5);
      expect((await call(app, 'GET', '/ready')).body.status).toBe(-5);
    });
  });
}

describe('under the supervisor, the API process answers for every process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-metrics-'));
  const lines: { msg?: string; apiUrl?: string; linkUrl?: string; processes?: string[] }[] = [];
  let server: ChildProcess;
  let apiUrl: string;
  let linkUrl: string;
  let env: NodeJS.ProcessEnv;
  let pids: Record<string, number> = {};

  beforeAll(async () => {
    env = {
      ...process.env,
      DATABASE_URL: join(dir, 'pigeon.db'),
      PORT: '0',
      LINK_PORT: '0',
      ROLE: 'all',
      PROCESSES: 'per-role',
      SIM_DLR_DELAY_MS: '0',
      LOG_LEVEL: 'info',
      // The test's webhook receiver listens on the loopback.
      WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    server = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    createInterface({ input: server.stdout! }).on('line', (line) => {
      try {
        lines.push(JSON.parse(line));
      } catch {
        // Not a log line.
      }
    });
    const ready = await waitFor(
      () => lines.find((l) => l.msg === 'Pigeon ready'),
      'every role to serve',
      80_000,
    );
    apiUrl = ready.apiUrl!;
    linkUrl = ready.linkUrl!;
    pids = Object.fromEntries(
      (ready.processes ?? []).map((p) => p.split(':')).map(([r, pid]) => [r, Number(pid)]),
    );
    const token = await createAccount(env, 'metrics@example.com', 20);
    const sent = await fetch(`${apiUrl}/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sms: { message: { text: 'Hi', pushtype: 'alert' }, recipients: { gsm: [{ value: '33612000009' }] } },
      }),
    });
    expect(((await sent.json()) as { status: number }).status).toBe(1);
  }, 120_000);

  afterAll(async () => {
    if (pids.delivery) {
      try {
        process.kill(pids.delivery, 'SIGCONT');
      } catch {
        // Gone already.
      }
    }
    if (server?.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('/metrics shows the series of role="delivery" and role="webhooks" beside the API\'s, each process up', async () => {
    const families = await waitFor(async () => {
      const res = await fetch(`${apiUrl}/metrics`);
      const parsed = parseExposition(await res.text());
      // The message's submit, counted in the delivery process.
      // A process that stalls past its second on a loaded machine is reported down for that scrape: asked again.
      const allUp = ['api', 'delivery', 'webhooks'].every(
        (role) => sampleValue(parsed, 'pigeon_process_up', { role }) === 1,
      );
      return allUp &&
        sampleValue(parsed, 'pigeon_delivery_submits_total', {
          role: 'delivery',
          outcome: 'accepted',
        }) === 1
        ? parsed
        : undefined;
    }, 'every process up, the delivery process having submitted the message');
    for (const role of ['api', 'delivery', 'webhooks']) {
      expect(sampleValue(families, 'pigeon_process_up', { role })).toBe(1);
      expect(sampleValue(families, 'pigeon_db_pool_open_connections', { role })).toBe(1);
      expect(sampleValue(families, 'process_start_time_seconds', { role })).toBeGreaterThan(0);
    }
    expect(sampleValue(families, 'pigeon_sends_accepted_total', { role: 'api' })).toBe(1);
    // Read once, by the API process: one series, without a role.
    expect(families.get('pigeon_messages')!.samples.every((s) => s.labels.role === undefined)).toBe(true);
    const checks = await waitFor(async () => {
      const ready = await fetch(`${apiUrl}/ready`);
      return ready.status === 200 && ((await ready.json()) as { checks: Record<string, string> }).checks;
    }, '/ready to answer 200');
    expect(checks).toMatchObject({ database: 'ok', delivery: 'ok', webhooks: 'ok' });
  });

  it('a process that does not answer is reported not ready and its metrics missing, within seconds, never a hang', async () => {
    process.kill(pids.delivery, 'SIGSTOP');
    try {
      // Every answer comes within seconds. The live webhooks process may itself stall past its second on a
      // loaded machine; that is reported truthfully too, so the question is asked again until it answers.
      const timed = async <T>(ask: () => Promise<T>): Promise<T> => {
        const startedAt = Date.now();
        const answer = await ask();
        expect(Date.now() - startedAt).toBeLessThan(5_000);
        return answer;
      };
      await waitFor(async () => {
        const ready = await timed(() => fetch(`${apiUrl}/ready`));
        expect(ready.status).toBe(503);
        const body = (await ready.json()) as { details: string; checks: Record<string, string> };
        expect(body.checks.delivery).toBe('no answer within 1000 ms');
        return body.checks.webhooks === 'ok';
      }, 'the stopped delivery process reported, the webhooks process answering');
      await waitFor(async () => {
        const families = parseExposition(await timed(async () => (await fetch(`${apiUrl}/metrics`)).text()));
        expect(sampleValue(families, 'pigeon_process_up', { role: 'delivery' })).toBe(0);
        expect(
          sampleValue(families, 'pigeon_db_pool_open_connections', { role: 'delivery' }),
        ).toBeUndefined();
        return sampleValue(families, 'pigeon_db_pool_open_connections', { role: 'webhooks' }) === 1;
      }, 'the metrics without the stopped process, with the webhooks process');
    } finally {
      process.kill(pids.delivery, 'SIGCONT');
    }
    await waitFor(
      async () => (await fetch(`${apiUrl}/ready`)).status === 200,
      'the delivery process to answer again',
    );
  });

  it('each series comes from the process doing the work: webhook attempts and alert jobs from role="webhooks", the click fold lag from the API\'s database read, event-loop lag from every process', async () => {
    const receiver = await new WebhookReceiver().listen();
    try {
      const token = await createAccount(env, 'series@example.com', 10);
      const api = (method: string, path: string, body: unknown) =>
        fetch(`${apiUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then((r) => r.json() as Promise<{ status: number; ticket?: string; details?: string }>);
      expect(
        (await api('POST', '/webhook', { webhook: { type: 'DLR', url: receiver.url('/dlr') } })).status,
      ).toBe(1);
      const notified = await api('PUT', '/notification/balance', {
        notification: { alert_trigger: '9', alert_email: '1', email: 'series@example.com' },
      });
      expect(notified.status, notified.details).toBe(1);
      // Two credits of ten: below the trigger, so an alert job is written; delivered at once, so a DLR.
      const sent = await api('POST', '/send', {
        sms: {
          message: { text: 'Offer <-short->', pushtype: 'alert', links: ['https://shop.example/series'] },
          recipients: { gsm: [{ value: '33612000021' }, { value: '33612000022' }] },
        },
      });
      expect(sent.status, sent.details).toBe(1);
      const store = await openStore(String(env.DATABASE_URL));
      const link = await store.db
        .selectFrom('links')
        .select('code')
        .where('campaign_id', '=', Number(sent.ticket))
        .orderBy('message_seq')
        .executeTakeFirstOrThrow()
        .finally(() => store.destroy());
      const click = await fetch(`${linkUrl}/${link.code}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 (Linux; Android 14) Chrome/126.0 Mobile Safari/537.36' },
      });
      expect(click.status).toBe(302);

      const families = await waitFor(async () => {
        const parsed = parseExposition(await (await fetch(`${apiUrl}/metrics`)).text());
        const webhooks = sampleValue(parsed, 'pigeon_webhook_deliveries_total', {
          role: 'webhooks',
          outcome: 'success',
        });
        const alerts = sampleValue(parsed, 'pigeon_alert_jobs_total', {
          role: 'webhooks',
          kind: 'email',
          outcome: 'failed',
        });
        return webhooks === 2 && alerts === 1 ? parsed : undefined;
      }, 'two DLR webhooks delivered and the alert e-mail (no SMTP) counted failed, by the webhooks process');
      expect(receiver.requests.filter((r) => r.path === '/dlr')).toHaveLength(2);
      // Counted where the dispatcher and the alert worker run, nowhere else.
      for (const role of ['api', 'delivery']) {
        const counted = families
          .get('pigeon_webhook_deliveries_total')!
          .samples.filter((s) => s.labels.role === role);
        expect(counted, role).toEqual([]);
        expect(
          families.get('pigeon_alert_jobs_total')!.samples.filter((s) => s.labels.role === role),
          role,
        ).toEqual([]);
      }
      // Read from the database by the API process that answers the scrape: one series, no role.
      const lag = families.get('pigeon_click_fold_lag_seconds')!;
      expect(lag.type).toBe('gauge');
      expect(lag.samples).toHaveLength(1);
      expect(lag.samples[0].labels).toEqual({});
      expect(lag.samples[0].value).toBeGreaterThanOrEqual(0);
      // The API process's click folder counts the click, and the lag is back to 0.
      await waitFor(async () => {
        const parsed = parseExposition(await (await fetch(`${apiUrl}/metrics`)).text());
        const campaign = (await (
          await fetch(`${apiUrl}/campaign/${sent.ticket}`, { headers: { authorization: `Bearer ${token}` } })
        ).json()) as { campaign?: { clicks?: number }[] };
        return (
          campaign.campaign?.[0]?.clicks === 1 && sampleValue(parsed, 'pigeon_click_fold_lag_seconds') === 0
        );
      }, 'the click folded and the lag 0');
      for (const role of ['api', 'delivery', 'webhooks']) {
        for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
          expect(sampleValue(families, name, { role }), `${name} ${role}`).toBeGreaterThanOrEqual(0);
        }
      }
    } finally {
      await receiver.close();
    }
  });
});
