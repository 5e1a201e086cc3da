// A worker that cannot record stops instead of running ahead, on SQLite: the database refuses every write
// (`PRAGMA query_only`, SQLITE_READONLY, on the process's one connection) while the delivery worker or the
// webhook dispatcher is mid-run. What it already did is kept and recorded once writes land again, nothing more
// goes out meanwhile than it held, and nothing is sent twice. And a write that fails only together (outcomes
// with receipts) but lands apart is said, since it costs every batch twice.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { outcomesApartMessage } from '../../src/delivery/delivery-worker.ts';
import { createTransport } from '../../src/delivery/transports.ts';
import type { Log } from '../../src/shared/log.ts';
import { createDispatcher } from '../../src/webhooks/dispatcher.ts';
import { createHttpSender } from '../../src/webhooks/http-sender.ts';
import { call, createHarness, type Harness } from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';

/** A log that keeps every line, to wait on what the worker reports. */
function recordingLog(): Log & { lines: { level: string; msg: string; obj: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  const keep = (level: string) => (obj: object, msg: string) =>
    lines.push({ level, msg, obj: obj as Record<string, unknown> });
  return { lines, info: keep('info'), warn: keep('warn'), error: keep('error') };
}

/** Every write of this process's SQLite connection refused (SQLITE_READONLY) while `on`. */
const refuseWrites = (h: Harness, on: boolean) =>
  sql.raw(`pragma query_only = ${on ? 1 : 0}`).execute(h.deps.store.db);

/** Waits until the worker has failed to record `attempts` times in a row (its log says so). */
const failedAttempts = (log: ReturnType<typeof recordingLog>, msg: string, attempts: number) =>
  waitFor(
    () => log.lines.some((l) => l.msg.startsWith(msg) && Number(l.obj.attempt) >= attempts),
    `${attempts} failed attempts to record`,
  );

async function send(h: Harness, token: string, size: number): Promise<number> {
  const gsm = Array.from({ length: size }, (_, i) => ({ value: `336${String(40001000 + i)}` }));
  const r = await call(h.app, 'POST', '/send', {
    token,
    json: { sms: { message: { text: 'Outage', pushtype: 'alert' }, recipients: { gsm } } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return Number(r.body.ticket);
}

const states = async (h: Harness, ticket: number) =>
  (
    await h.deps.store.db.selectFrom('messages').select(['state']).where('campaign_id', '=', ticket).execute()
  ).map((r) => r.state);

describe('records that fail [sqlite]', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('a delivery worker that cannot record submits nothing past its window, keeps its outcomes, and records them once writes land: none sent twice', async () => {
    const window = 10;
    const smsc = await new TestSmsc({ redeliverReceipts: true }).listen();
    const h = await createHarness('sqlite', {
      TRANSPORT: 'smpp',
      SMPP_URL: smsc.url,
      SMPP_BINDS: '1',
      SMPP_WINDOW: String(window),
    });
    cleanups.push(async () => {
      await h.close();
      await smsc.close();
    });
    const a = await h.account({ credits: 10_000 });
    const size = 600;
    const ticket = await send(h, a.token, size);
    const log = recordingLog();
    const transport = createTransport(h.config, log, undefined, h.deps.routing);
    const worker = testDeliveryWorker(h, transport, { batchSize: 200 }, log);
    await worker.start();
    cleanups.push(() => worker.stop());
    await waitFor(() => smsc.submits.length >= 100, 'a sixth of the campaign submitted');
    await refuseWrites(h, true);
    const submitsAtFailure = smsc.submits.length;
    await failedAttempts(log, 'could not record submit outcomes', 4);
    // Nothing more went out than the messages already holding a permit (the transport's window).
    expect(smsc.submits.length - submitsAtFailure).toBeLessThanOrEqual(window);
    await refuseWrites(h, false);
    await waitFor(
      async () => (await states(h, ticket)).every((s) => s === 'delivered'),
      'every message delivered',
      20_000,
    );
    expect(log.lines.some((l) => l.msg.startsWith('submit outcomes and receipts recorded again'))).toBe(true);
    // Kept and recorded, not dropped and sent again: each number was submitted once.
    expect(smsc.submits).toHaveLength(size);
    const events = await h.deps.store.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('campaign_id', '=', ticket)
      .where('type', '=', 'DLR')
      .executeTakeFirstOrThrow();
    expect(Number(events.n)).toBe(size);
  });

  it('outcomes and receipts that fail together but land apart are all recorded, and the worker says so', async () => {
    const h = await createHarness('sqlite');
    cleanups.push(() => h.close());
    const a = await h.account({ credits: 10_000 });
    const size = 200;
    const ticket = await send(h, a.token, size);
    const log = recordingLog();
    const delivery = h.deps.services.delivery;
    // A write of both kinds at once fails, as a statement of its own would; each kind alone lands.
    const together: typeof delivery = Object.create(delivery);
    together.recordOutcomes = async (results, receipts) => {
      if (results.length > 0 && receipts.length > 0) throw new Error('the two writes cannot go together');
      return delivery.recordOutcomes(results, receipts);
    };
    const services = { ...h.deps.services, delivery: together };
    const worker = testDeliveryWorker(
      { ...h, deps: { ...h.deps, services } },
      deliveringSimulator(),
      {},
      log,
    );
    await worker.start();
    cleanups.push(() => worker.stop());
    await waitFor(
      async () => (await states(h, ticket)).every((s) => s === 'delivered'),
      'every message delivered',
      20_000,
    );
    const apart = log.lines.filter((l) => l.msg === outcomesApartMessage);
    expect(apart.length).toBeGreaterThan(0);
    expect((apart[0].obj.err as Error).message).toBe('the two writes cannot go together');
  });

  it('a webhook dispatcher that cannot record starts no request, keeps its attempts, and records them once writes land: each webhook sent once', async () => {
    const h = await createHarness('sqlite', { WEBHOOK_ALLOW_PRIVATE: 'true' });
    const receiver = await new WebhookReceiver().listen();
    cleanups.push(async () => {
      await h.close();
      await receiver.close();
    });
    const a = await h.account({ credits: 10_000 });
    const hook = await call(h.app, 'POST', '/webhook', {
      token: a.token,
      json: { webhook: { type: 'DLR', url: receiver.url() } },
    });
    expect(hook.body.status, hook.body.details).toBe(1);
    // Twenty DLR events, by a worker on the simulator.
    const size = 20;
    const ticket = await send(h, a.token, size);
    const worker = testDeliveryWorker(h, deliveringSimulator());
    await worker.start();
    await waitFor(
      async () => (await states(h, ticket)).every((s) => s === 'delivered'),
      'every message delivered',
    );
    await worker.stop();
    // The first requests hang until the database refuses writes; then they are answered.
    receiver.answer = () => ({ hang: true });
    const log = recordingLog();
    const inFlight = 8;
    const dispatcher = createDispatcher({
      deliveries: h.deps.services.webhookDeliveries,
      sender: createHttpSender({
        guard: h.deps.urlGuard,
        connectTimeoutMs: 2000,
        requestTimeoutMs: 10_000,
        maxResponseBytes: 64 * 1024,
      }),
      clock: h.clock,
      log,
      options: {
        pollMs: 10,
        fanOutBatch: 100,
        maxClaimed: 64,
        perWebhookInFlight: inFlight,
        perWebhookAhead: 64,
        sweepMs: 20,
        stopGraceMs: 1000,
      },
    });
    dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    await waitFor(() => receiver.requests.length === inFlight, 'the first requests in flight');
    await refuseWrites(h, true);
    // Answered while their record cannot land: the next ones start (nothing has failed yet) and hang too.
    receiver.releaseHanging(200);
    await waitFor(() => receiver.requests.length === 2 * inFlight, 'the next requests in flight');
    await failedAttempts(log, 'could not record webhook attempts', 2);
    receiver.answer = () => ({ status: 200 });
    receiver.releaseHanging(200);
    await failedAttempts(log, 'could not record webhook attempts', 4);
    // The deliveries it holds but had not started stay unsent while the record fails.
    expect(receiver.requests).toHaveLength(2 * inFlight);
    await refuseWrites(h, false);
    await waitFor(
      async () =>
        (await h.deps.store.db.selectFrom('webhook_deliveries').select('state').execute()).every(
          (d) => d.state === 'delivered',
        ),
      'every webhook delivery recorded delivered',
    );
    // Recorded as sent, not dropped and sent again: one request per event.
    expect(receiver.requests).toHaveLength(size);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(size);
  });
});
