// Webhook delivery end to end, against real loopback receivers: fan-out, signing, the retry schedule on a
// manual clock, timeouts, Retry-After, pausing a webhook that keeps failing, the attempt log and test
// endpoint, the URL guard at connection time, leases, shutdown, and two dispatchers sharing one database.
import { XMLParser } from 'fast-xml-parser';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it } from 'vitest';
import { createDeps, type Deps } from '../../src/deps.ts';
import { createDispatcher, type Dispatcher } from '../../src/webhooks/dispatcher.ts';
import { createHttpSender } from '../../src/webhooks/http-sender.ts';
import { createUrlGuard, type UrlGuard } from '../../src/webhooks/url-guard.ts';
import { webhookDeliveriesRepo } from '../../src/webhooks/webhook-deliveries.repo.ts';
import type { WebhookDeliveriesService } from '../../src/webhooks/webhook-deliveries.service.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Answer, type ReceivedRequest, WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';

const quietLog = process.env.DEBUG_WEBHOOKS
  ? { info: console.log, warn: console.log, error: console.log }
  : { info() {}, warn() {}, error() {} };

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;

const xml = new XMLParser({
  parseTagValue: false,
  ignoreDeclaration: true,
  isArray: (_name, jpath) => String(jpath) === 'response.deliveries',
});

describeEachDialect(
  'webhook dispatcher',
  (h) => {
    const receivers: WebhookReceiver[] = [];
    const stops: (() => Promise<void>)[] = [];
    const extraDeps: Deps[] = [];
    let probe: { receiver: WebhookReceiver; account: TestAccount } | undefined;

    afterEach(async () => {
      for (const stop of stops.splice(0)) await stop();
      for (const r of receivers.splice(0)) await r.close();
      for (const d of extraDeps.splice(0)) await d.close();
      if (probe) {
        await probe.receiver.close();
        probe = undefined;
      }
      // What a test leaves scheduled must not be sent during the next one.
      await db()
        .updateTable('webhook_deliveries')
        .set({ state: 'failed' })
        .where('state', 'in', ['pending', 'held', 'sending'])
        .execute();
      await db().updateTable('events').set({ fanned_out: 1 }).where('fanned_out', '=', 0).execute();
    });

    const db = () => h().deps.store.db;
    const clock = () => h().clock;

    async function receiver(answer?: (request: ReceivedRequest, index: number) => Answer) {
      const r = await new WebhookReceiver().listen();
      if (answer) r.answer = answer;
      receivers.push(r);
      return r;
    }

    function dispatcher(
      options: {
        guard?: UrlGuard;
        requestTimeoutMs?: number;
        deliveries?: WebhookDeliveriesService;
        stopGraceMs?: number;
        fanOutBatch?: number;
        maxClaimed?: number;
        perWebhookAhead?: number;
        slowMs?: number;
        pollMs?: number;
      } = {},
    ): Dispatcher {
      const d = createDispatcher({
        deliveries: options.deliveries ?? h().deps.services.webhookDeliveries,
        sender: createHttpSender({
          guard: options.guard ?? h().deps.urlGuard,
          connectTimeoutMs: 2000,
          requestTimeoutMs: options.requestTimeoutMs ?? 5000,
          maxResponseBytes: 64 * 1024,
        }),
        clock: h().clock,
        log: quietLog,
        options: {
          pollMs: options.pollMs ?? 10,
          fanOutBatch: options.fanOutBatch ?? 100,
          maxClaimed: options.maxClaimed ?? 64,
          perWebhookInFlight: 8,
          perWebhookAhead: options.perWebhookAhead ?? 16,
          slowMs: options.slowMs,
          sweepMs: 20,
          stopGraceMs: options.stopGraceMs ?? 1000,
        },
      });
      d.start();
      stops.push(() => d.stop());
      return d;
    }

    async function webhook(
      account: TestAccount,
      type: string,
      url: string,
      signature?: string,
      format?: string,
    ) {
      const r = await call(h().app, 'POST', '/webhook', {
        token: account.token,
        json: { webhook: { type, url, signature, format } },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return { id: Number(r.body.webhook.webhook_id), secret: r.body.webhook.secret as string };
    }

    async function emit(accountId: number, type: string, payload: object): Promise<number> {
      const row = await db()
        .insertInto('events')
        .values({
          account_id: accountId,
          campaign_id: null,
          type,
          payload: JSON.stringify(payload),
          created_at: clock().now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    }

    const deliveriesOf = (webhookId: number) =>
      db()
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .orderBy('id')
        .execute();

    const attemptsOf = (webhookId: number) =>
      db()
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .orderBy('id')
        .execute();

    const webhookRow = (id: number) =>
      db().selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    /** Waits until nothing is left to do at the clock's current time: events fanned out, due deliveries sent and recorded. */
    async function settled(...dispatchers: Dispatcher[]): Promise<void> {
      await waitFor(async () => {
        if (dispatchers.some((d) => d.held > 0)) return false;
        const now = clock().now();
        const events = await db()
          .selectFrom('events')
          .select('id')
          .where('fanned_out', '=', 0)
          .limit(1)
          .execute();
        const busy = await db()
          .selectFrom('webhook_deliveries')
          .select('id')
          .where((eb) =>
            eb.or([
              eb('state', '=', 'sending'),
              eb.and([eb('state', '=', 'pending'), eb('next_attempt_at', '<=', now)]),
            ]),
          )
          .limit(1)
          .execute();
        return events.length === 0 && busy.length === 0 && dispatchers.every((d) => d.held === 0);
      }, 'the dispatcher to settle');
    }

    /**
     * Proves the dispatcher has looked for due deliveries at the current clock time: a probe event for a
     * webhook of its own is fanned out and claimed in a pass that would have claimed anything else due.
     */
    async function probePass(d: Dispatcher): Promise<void> {
      if (!probe) {
        const account = await h().account();
        const r = await new WebhookReceiver().listen();
        probe = { receiver: r, account };
        await webhook(account, 'BALANCE_ALERT', r.url('/probe'));
      }
      const before = probe.receiver.requests.length;
      await emit(probe.account.id, 'BALANCE_ALERT', { balance: 1, trigger: 2, date: 'now' });
      d.wake();
      const p = probe;
      await waitFor(() => p.receiver.requests.length > before, 'the probe delivery');
      await waitFor(() => d.held === 0, 'the probe to be recorded');
    }

    /** Moves the clock from one due delivery to the next, letting each be sent, until `until`. */
    async function runUntil(d: Dispatcher, until: number): Promise<void> {
      for (;;) {
        await settled(d);
        const next = await db()
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.min('next_attempt_at').as('next'))
          .where('state', '=', 'pending')
          .executeTakeFirst();
        const at = next?.next === null || next?.next === undefined ? undefined : Number(next.next);
        if (at === undefined || at > until) {
          clock().set(Math.max(clock().now(), until));
          d.wake();
          await settled(d);
          return;
        }
        clock().set(Math.max(clock().now(), at));
        d.wake();
      }
    }

    it('each event goes to every live webhook of its type and account, and to no other', async () => {
      const a = await h().account();
      const b = await h().account();
      const r = await receiver();
      const one = await webhook(a, 'DLR', r.url('/one'));
      const two = await webhook(a, 'DLR', r.url('/two'));
      const paused = await webhook(a, 'DLR', r.url('/paused'));
      await call(h().app, 'PUT', `/webhook/${paused.id}/status`, {
        token: a.token,
        json: { webhook: { status: 'paused' } },
      });
      const otherType = await webhook(a, 'MO', r.url('/mo'));
      const otherAccount = await webhook(b, 'DLR', r.url('/b'));
      const d = dispatcher();
      const eventId = await emit(a.id, 'DLR', { message_id: 'm1', status: 3 });
      await waitFor(() => r.requests.length === 2, 'two deliveries');
      await settled(d);
      expect(r.requests.map((q) => q.path).sort()).toEqual(['/one', '/two']);
      const rows = await db()
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('event_id', '=', eventId)
        .execute();
      expect(rows.map((row) => [row.webhook_id, row.state]).sort()).toEqual(
        [
          [one.id, 'delivered'],
          [two.id, 'delivered'],
        ].sort(),
      );
      for (const w of [paused, otherType, otherAccount]) expect(await deliveriesOf(w.id)).toEqual([]);
      // The fan-out happened once: the event is marked, and a later pass adds nothing.
      await probePass(d);
      expect(
        await db().selectFrom('webhook_deliveries').select('id').where('event_id', '=', eventId).execute(),
      ).toHaveLength(2);
      expect(r.requests).toHaveLength(2);
    });

    it('signs each delivery: Standard Webhooks headers that verify, and X-SMSFactor-Signature when set', async () => {
      // standardwebhooks refuses timestamps more than 5 minutes from the real time (whole seconds keep
      // the other tests' exact arithmetic on times).
      clock().set(Math.floor(Date.now() / 1000) * 1000);
      const a = await h().account();
      const r = await receiver();
      const signed = await webhook(a, 'MO', r.url('/signed'), 'my-shared-secret');
      const unsigned = await webhook(a, 'STOP', r.url('/unsigned'));
      const d = dispatcher();
      const mo = { date: '2026-01-05T10:00:00+01:00', message: 'Bonjour ✓', from: '33612345678' };
      await emit(a.id, 'MO', mo);
      await emit(a.id, 'STOP', { message: 'STOP' });
      await waitFor(() => r.requests.length === 2, 'both deliveries');
      await settled(d);
      const first = r.requests.find((q) => q.path === '/signed')!;
      const [delivery] = await deliveriesOf(signed.id);
      expect(first.method).toBe('POST');
      expect(first.headers['content-type']).toBe('application/json');
      expect(first.headers['x-smsfactor-signature']).toBe('my-shared-secret');
      expect(first.headers['webhook-id']).toBe(`msg_${delivery.id}`);
      expect(first.headers['webhook-timestamp']).toBe(String(Math.floor(clock().now() / 1000)));
      expect(first.body).toBe(JSON.stringify(mo));
      const headers = {
        'webhook-id': String(first.headers['webhook-id']),
        'webhook-timestamp': String(first.headers['webhook-timestamp']),
        'webhook-signature': String(first.headers['webhook-signature']),
      };
      expect(new Webhook(signed.secret).verify(first.body, headers)).toEqual(mo);
      // The verification is real: another secret or a changed body fails it.
      expect(() => new Webhook(unsigned.secret).verify(first.body, headers)).toThrow();
      expect(() =>
        new Webhook(signed.secret).verify(first.body.replace('Bonjour', 'Bonsoir'), headers),
      ).toThrow();
      const second = r.requests.find((q) => q.path === '/unsigned')!;
      expect(second.headers['x-smsfactor-signature']).toBeUndefined();
      expect(
        new Webhook(unsigned.secret).verify(second.body, {
          'webhook-id': String(second.headers['webhook-id']),
          'webhook-timestamp': String(second.headers['webhook-timestamp']),
          'webhook-signature': String(second.headers['webhook-signature']),
        }),
      ).toEqual({ message: 'STOP' });
    });

    it('a form webhook gets the event as application/x-www-form-urlencoded fields, signed over that body', async () => {
      clock().set(Math.floor(Date.now() / 1000) * 1000);
      const a = await h().account();
      const r = await receiver();
      const hook = await webhook(a, 'MO', r.url('/form'), 'shared', 'form');
      const d = dispatcher();
      const mo = {
        date: '2026-01-05 10:00:00',
        message: 'Oui & ✓',
        from: '33612345678',
        account_id: 7,
        last: null,
      };
      await emit(a.id, 'MO', mo);
      await waitFor(() => r.requests.length === 1, 'the delivery');
      await settled(d);
      const [got] = r.requests;
      expect(got.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(got.headers['x-smsfactor-signature']).toBe('shared');
      // What a PHP receiver's $_POST holds: every field as text.
      expect(Object.fromEntries(new URLSearchParams(got.body))).toEqual({
        date: '2026-01-05 10:00:00',
        message: 'Oui & ✓',
        from: '33612345678',
        account_id: '7',
        last: '',
      });
      const signedAt = new Date(Number(got.headers['webhook-timestamp']) * 1000);
      expect(got.headers['webhook-signature']).toBe(
        new Webhook(hook.secret).sign(String(got.headers['webhook-id']), signedAt, got.body),
      );
      const [attempt] = await attemptsOf(hook.id);
      expect(attempt.request_body).toBe(got.body);
    });

    it('a receiver that fails, then succeeds, gets the retries on the schedule, with one webhook-id throughout', async () => {
      const a = await h().account();
      const r = await receiver((_q, i) => ({ status: i < 3 ? 500 : 204 }));
      const w = await webhook(a, 'DLR', r.url());
      const d = dispatcher();
      await emit(a.id, 'DLR', { message_id: 'retry-me' });
      await waitFor(() => r.requests.length === 1, 'the first attempt');
      await settled(d);
      for (const [n, stepMs] of [
        [2, 5 * second],
        [3, 5 * minute],
        [4, 30 * minute],
      ]) {
        const [delivery] = await deliveriesOf(w.id);
        expect(delivery).toMatchObject({ state: 'pending', attempts: n - 1 });
        const waitMs = delivery.next_attempt_at - clock().now();
        expect(waitMs).toBeGreaterThanOrEqual(stepMs * 0.9);
        expect(waitMs).toBeLessThanOrEqual(stepMs * 1.1);
        // Not a millisecond early (the claim's probe finds nothing due)…
        clock().set(delivery.next_attempt_at - 1);
        expect(await webhookDeliveriesRepo.anyDue(db(), clock().now())).toBe(false);
        await probePass(d);
        expect(r.requests).toHaveLength(n - 1);
        // …and sent once due.
        clock().set(delivery.next_attempt_at);
        expect(await webhookDeliveriesRepo.anyDue(db(), clock().now())).toBe(true);
        d.wake();
        await waitFor(() => r.requests.length === n, `attempt ${n}`);
        await settled(d);
      }
      const [delivery] = await deliveriesOf(w.id);
      expect(delivery).toMatchObject({ state: 'delivered', attempts: 4 });
      expect(new Set(r.requests.map((q) => q.headers['webhook-id']))).toEqual(
        new Set([`msg_${delivery.id}`]),
      );
      expect(new Set(r.requests.map((q) => q.body)).size).toBe(1);
      const attempts = await attemptsOf(w.id);
      expect(attempts.map((x) => [x.attempt, x.http_code])).toEqual([
        [1, 500],
        [2, 500],
        [3, 500],
        [4, 204],
      ]);
      expect(attempts.slice(0, 3).map((x) => x.next_attempt_at)).toEqual(
        attempts.slice(1).map((x) => x.attempted_at),
      );
      expect(attempts[3].next_attempt_at).toBeNull();
      expect(await webhookRow(w.id)).toMatchObject({
        last_http_code: 204,
        failing_since: null,
        status: 'live',
      });
    });

    it('a receiver that does not answer is cut off at the request timeout and tried again', async () => {
      const a = await h().account();
      const r = await receiver((_q, i) => (i === 0 ? { hang: true } : { status: 200 }));
      const w = await webhook(a, 'MO', r.url());
      const d = dispatcher({ requestTimeoutMs: 300 });
      await emit(a.id, 'MO', { message: 'hello' });
      await waitFor(async () => (await attemptsOf(w.id)).length === 1, 'the timed-out attempt');
      await settled(d);
      const [timedOut] = await attemptsOf(w.id);
      expect(timedOut).toMatchObject({ attempt: 1, http_code: null, error: 'no answer within 300 ms' });
      expect(timedOut.latency_ms).toBeGreaterThanOrEqual(290);
      expect((await webhookRow(w.id)).last_http_code).toBe(0);
      const view = await call(h().app, 'GET', `/webhook/${w.id}`, { token: a.token });
      expect(view.body.webhook.last_http_code).toBe('0');
      clock().set(timedOut.next_attempt_at!);
      d.wake();
      await waitFor(() => r.requests.length === 2, 'the retry');
      await settled(d);
      expect((await deliveriesOf(w.id))[0]).toMatchObject({ state: 'delivered', attempts: 2 });
      expect(r.requests[1].headers['webhook-id']).toBe(r.requests[0].headers['webhook-id']);
      expect(Number(r.requests[1].headers['webhook-timestamp'])).toBeGreaterThan(
        Number(r.requests[0].headers['webhook-timestamp']),
      );
    });

    it('honours Retry-After, in seconds or as an HTTP date, never sooner than the schedule and capped at an hour', async () => {
      // HTTP dates have whole seconds; so must the clock for the exact comparison below.
      clock().set(Math.ceil(clock().now() / 1000) * 1000);
      const a = await h().account();
      const answers: Answer[] = [];
      const r = await receiver((_q, i) => answers[i] ?? { status: 200 });
      const w = await webhook(a, 'CLICKER', r.url());
      const d = dispatcher();
      // Attempt 1: an HTTP date 10 minutes ahead (the schedule says 5 s).
      answers[0] = {
        status: 503,
        headers: { 'retry-after': new Date(clock().now() + 10 * minute).toUTCString() },
      };
      // Attempt 2: 1 second (the schedule's 5 minutes win).
      answers[1] = { status: 429, headers: { 'retry-after': '1' } };
      // Attempt 3: 99999999 seconds, capped at 1 hour (the schedule says 30 minutes).
      answers[2] = { status: 503, headers: { 'retry-after': '99999999' } };
      await emit(a.id, 'CLICKER', { campaign_id: '1' });
      await waitFor(() => r.requests.length === 1, 'the first attempt');
      await settled(d);
      let [delivery] = await deliveriesOf(w.id);
      expect(delivery.next_attempt_at - clock().now()).toBe(10 * minute);
      clock().set(delivery.next_attempt_at - 1);
      await probePass(d);
      expect(r.requests).toHaveLength(1);
      for (const [n, low, high] of [
        [2, 5 * minute * 0.9, 5 * minute * 1.1],
        [3, hour, hour],
      ]) {
        clock().set(delivery.next_attempt_at);
        d.wake();
        await waitFor(() => r.requests.length === n, `attempt ${n}`);
        await settled(d);
        [delivery] = await deliveriesOf(w.id);
        const waitMs = delivery.next_attempt_at - clock().now();
        expect(waitMs).toBeGreaterThanOrEqual(low);
        expect(waitMs).toBeLessThanOrEqual(high);
      }
      clock().set(delivery.next_attempt_at);
      d.wake();
      await waitFor(() => r.requests.length === 4, 'attempt 4');
      await settled(d);
      expect((await deliveriesOf(w.id))[0].state).toBe('delivered');
    });

    it('redirects are not followed: a 3xx is a failed attempt and the target is never contacted', async () => {
      const a = await h().account();
      const target = await receiver();
      const r = await receiver(() => ({ status: 302, headers: { location: target.url('/elsewhere') } }));
      const w = await webhook(a, 'DLR', r.url());
      const d = dispatcher();
      await emit(a.id, 'DLR', { message_id: 'moved' });
      await waitFor(async () => (await attemptsOf(w.id)).length === 1, 'the attempt');
      await settled(d);
      expect((await attemptsOf(w.id))[0]).toMatchObject({ http_code: 302, error: null });
      expect((await deliveriesOf(w.id))[0].state).toBe('pending');
      expect(target.connections).toBe(0);
    });

    it('a large answer is read up to a cap and does not fail a 2xx', async () => {
      const a = await h().account();
      const r = await receiver(() => ({ status: 200, body: 'x'.repeat(2 * 1024 * 1024) }));
      const w = await webhook(a, 'DLR', r.url());
      const d = dispatcher();
      await emit(a.id, 'DLR', { message_id: 'big' });
      await waitFor(async () => (await deliveriesOf(w.id))[0]?.state === 'delivered', 'the delivery');
      await settled(d);
      expect((await attemptsOf(w.id))[0]).toMatchObject({ http_code: 200, error: null });
    });

    it('a webhook down for days is paused after 5 days without success; then nothing is sent until it is live again', async () => {
      const a = await h().account();
      let up = false;
      const r = await receiver(() => ({ status: up ? 200 : 503 }));
      const w = await webhook(a, 'MO', r.url());
      const d = dispatcher();
      const t0 = clock().now();
      const events: number[] = [];
      for (let n = 0; n <= 5; n++) {
        await runUntil(d, t0 + n * day);
        events.push(await emit(a.id, 'MO', { message: `day ${n}` }));
      }
      await runUntil(d, t0 + 5 * day);
      const row = await webhookRow(w.id);
      expect(row).toMatchObject({ status: 'paused', last_http_code: 503, failing_since: t0 });
      const view = await call(h().app, 'GET', `/webhook/${w.id}`, { token: a.token });
      expect(view.body.webhook).toMatchObject({ status: 'paused', last_http_code: '503' });

      const deliveries = await deliveriesOf(w.id);
      // The first event ran its whole schedule: 8 attempts, about 27.6 hours, then gave up.
      expect(deliveries[0]).toMatchObject({ event_id: events[0], state: 'failed', attempts: 8 });
      const firstAttempts = (await attemptsOf(w.id)).filter((x) => x.delivery_id === deliveries[0].id);
      expect(firstAttempts).toHaveLength(8);
      const span = firstAttempts[7].attempted_at - firstAttempts[0].attempted_at;
      expect(span).toBeGreaterThan(27.6 * hour * 0.9);
      expect(span).toBeLessThan(27.6 * hour * 1.1);
      expect(firstAttempts[7].next_attempt_at).toBeNull();
      // The deliveries still under way when it was paused are held, untried.
      const held = deliveries.filter((x) => x.state === 'held');
      expect(held.map((x) => x.event_id)).toEqual(expect.arrayContaining([events[4], events[5]]));

      // While paused: no new delivery for new events, and nothing sent however long we wait.
      const sent = r.requests.length;
      const later = await emit(a.id, 'MO', { message: 'while paused' });
      await runUntil(d, clock().now() + 3 * day);
      await probePass(d);
      expect(r.requests).toHaveLength(sent);
      expect((await deliveriesOf(w.id)).some((x) => x.event_id === later)).toBe(false);

      // Set live again: the held deliveries go out at once.
      up = true;
      const live = await call(h().app, 'PUT', `/webhook/${w.id}/status`, {
        token: a.token,
        json: { webhook: { status: 'live' } },
      });
      expect(live.body.webhook.status).toBe('live');
      d.wake();
      await waitFor(() => r.requests.length === sent + held.length, 'the held deliveries');
      await settled(d);
      const after = await deliveriesOf(w.id);
      expect(
        after.filter((x) => held.some((hd) => hd.id === x.id)).every((x) => x.state === 'delivered'),
      ).toBe(true);
      expect(await webhookRow(w.id)).toMatchObject({
        status: 'live',
        last_http_code: 200,
        failing_since: null,
      });
    });

    /** Account a's webhook on a receiver that hangs, account b's on one that answers at once. */
    async function slowAndFast() {
      const a = await h().account();
      const b = await h().account();
      const slow = await receiver(() => ({ hang: true }));
      const fast = await receiver();
      const slowHook = await webhook(a, 'MO', slow.url());
      const fastHook = await webhook(b, 'MO', fast.url());
      const fastDelivered = async () =>
        (await deliveriesOf(fastHook.id)).filter((x) => x.state === 'delivered').length;
      /** Lets the hanging receiver answer until it has all `total` requests, and waits for them recorded. */
      async function catchUp(total: number) {
        await waitFor(() => {
          slow.releaseHanging();
          return slow.requests.length === total;
        }, 'the slow receiver to catch up');
        await waitFor(
          async () => (await deliveriesOf(slowHook.id)).every((x) => x.state === 'delivered'),
          'the slow deliveries to be recorded',
        );
      }
      return { a, b, slow, slowHook, fastDelivered, catchUp };
    }

    it('one slow receiver holds at most 8 requests in flight and does not hold back the others', async () => {
      const { a, b, slow, fastDelivered, catchUp } = await slowAndFast();
      dispatcher({ requestTimeoutMs: 20_000 });
      for (let i = 0; i < 20; i++) await emit(a.id, 'MO', { n: i });
      for (let i = 0; i < 20; i++) await emit(b.id, 'MO', { n: i });
      await waitFor(async () => (await fastDelivered()) === 20, 'the fast receiver to get everything');
      expect(slow.requests).toHaveLength(8);
      expect(slow.maxInFlight).toBe(8);
      await catchUp(20);
      expect(slow.maxInFlight).toBe(8);
    });

    it('a receiver that hangs gives back what it had queued: one webhook may take a whole process, and still not hold back the others', async () => {
      const { a, b, slow, slowHook, fastDelivered, catchUp } = await slowAndFast();
      // As with the production defaults, one webhook's share is the whole process's room.
      dispatcher({ requestTimeoutMs: 20_000, maxClaimed: 16, perWebhookAhead: 16, slowMs: 300 });
      for (let i = 0; i < 30; i++) await emit(a.id, 'MO', { n: i });
      await waitFor(() => slow.requests.length === 8, 'the slow receiver to hang on 8 requests');
      for (let i = 0; i < 20; i++) await emit(b.id, 'MO', { n: i });
      await waitFor(
        async () => (await fastDelivered()) === 20,
        'the fast receiver to get everything meanwhile',
      );
      // Nothing of the slow webhook was sent beyond its requests in flight.
      expect(slow.requests).toHaveLength(8);
      await catchUp(30);
      // Each was sent once: what was given back was not sent before it was taken again.
      expect(new Set(slow.requests.map((r) => r.headers['webhook-id'])).size).toBe(30);
      expect(await attemptsOf(slowHook.id)).toHaveLength(30);
      expect(slow.maxInFlight).toBe(8);
    });

    it('POST /webhook/:id/test sends a sample of its type through the same path; GET /webhook/:id/deliveries logs every attempt (JSON and XML)', async () => {
      const a = await h().account();
      // The first answer's body is longer than the log keeps: its first 2 KB are kept.
      const refusal = `{"error":"busy"}${'.'.repeat(3000)}`;
      const r = await receiver((_q, i) =>
        i === 0 ? { status: 500, body: refusal } : { status: 200, body: 'ok' },
      );
      const w = await webhook(a, 'MO', r.url(), 'sig');
      const d = dispatcher();
      const test = await call(h().app, 'POST', `/webhook/${w.id}/test`, { token: a.token });
      expect(test.body).toEqual({
        status: 1,
        message: 'OK',
        test: {
          delivery_id: expect.stringMatching(/^\d+$/),
          webhook_id: String(w.id),
          type: 'MO',
          body: {
            // To the second, like the date of a real MO.
            date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)$/),
            message: 'Test reply from Pigeon',
            from: '33600000000',
            account_id: String(a.id),
            last_message_id: 'test',
          },
        },
      });
      await waitFor(() => r.requests.length === 1, 'the test delivery');
      expect(JSON.parse(r.requests[0].body)).toEqual(test.body.test.body);
      expect(r.requests[0].headers['webhook-id']).toBe(`msg_${test.body.test.delivery_id}`);
      expect(r.requests[0].headers['x-smsfactor-signature']).toBe('sig');
      await settled(d);
      const [first] = await deliveriesOf(w.id);
      clock().set(first.next_attempt_at);
      d.wake();
      await waitFor(() => r.requests.length === 2, 'its retry');
      const xmlTest = await call(h().app, 'POST', `/webhook/${w.id}/test`, {
        token: a.token,
        accept: 'application/xml',
      });
      expect(xmlTest.raw).toMatch(
        /<test><delivery_id>\d+<\/delivery_id><webhook_id>\d+<\/webhook_id><type>MO<\/type>/,
      );
      await waitFor(() => r.requests.length === 3, 'the second test delivery');
      await settled(d);

      const log = await call(h().app, 'GET', `/webhook/${w.id}/deliveries`, { token: a.token });
      expect(log.body.status).toBe(1);
      expect(log.body.totalRecords).toBe(3);
      expect(log.body.deliveries).toEqual([
        {
          attempt_id: expect.stringMatching(/^\d+$/),
          delivery_id: expect.not.stringMatching(test.body.test.delivery_id),
          event_type: 'MO',
          // A test delivery carries no event: null, never an id out of the schema's pattern.
          event_id: null,
          attempt: 1,
          http_code: '200',
          latency_ms: expect.any(Number),
          date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          next_attempt: null,
          error: null,
          // What was exchanged, as the receiver saw it.
          request_headers: {
            'content-type': 'application/json',
            'user-agent': 'Pigeon-Webhooks/1',
            'webhook-id': r.requests[2].headers['webhook-id'],
            'webhook-timestamp': r.requests[2].headers['webhook-timestamp'],
            'webhook-signature': r.requests[2].headers['webhook-signature'],
            'X-SMSFactor-Signature': 'sig',
          },
          request_body: r.requests[2].body,
          response_body: 'ok',
        },
        expect.objectContaining({ delivery_id: test.body.test.delivery_id, attempt: 2, http_code: '200' }),
        expect.objectContaining({
          delivery_id: test.body.test.delivery_id,
          attempt: 1,
          http_code: '500',
          next_attempt: log.body.deliveries[1].date,
          request_body: r.requests[0].body,
          response_body: refusal.slice(0, 2048),
        }),
      ]);
      const paged = await call(h().app, 'GET', `/webhook/${w.id}/deliveries`, {
        token: a.token,
        query: { start: '2', length: '2' },
      });
      expect(paged.body.deliveries).toEqual([log.body.deliveries[2]]);
      expect(paged.body.totalRecords).toBe(3);
      const firstTwo = await call(h().app, 'GET', `/webhook/${w.id}/deliveries`, {
        token: a.token,
        query: { length: '2' },
      });
      expect(firstTwo.body.deliveries).toEqual(log.body.deliveries.slice(0, 2));

      const asXml = await call(h().app, 'GET', `/webhook/${w.id}/deliveries`, {
        token: a.token,
        accept: 'application/xml',
      });
      const parsed = xml.parse(asXml.raw).response;
      expect(parsed.status).toBe('1');
      expect(parsed.totalRecords).toBe('3');
      expect(parsed.deliveries).toHaveLength(3);
      expect(parsed.deliveries.map((x: { attempt_id: string }) => x.attempt_id)).toEqual(
        log.body.deliveries.map((x: { attempt_id: string }) => x.attempt_id),
      );
      expect(parsed.deliveries[2]).toMatchObject({ attempt: '1', http_code: '500', event_type: 'MO' });

      for (const length of ['0', '1001', 'x']) {
        const bad = await call(h().app, 'GET', `/webhook/${w.id}/deliveries`, {
          token: a.token,
          query: { length },
        });
        expect(bad.body).toMatchObject({
          status: -7,
          details: `length "${length}" must be a whole number from 1 to 1000`,
        });
      }
      const other = await h().account();
      for (const [method, path] of [
        ['GET', `/webhook/${w.id}/deliveries`],
        ['POST', `/webhook/${w.id}/test`],
      ]) {
        const r2 = await call(h().app, method, path, { token: other.token });
        expect(r2.body).toMatchObject({ status: -5, details: `webhook "${w.id}" not found` });
      }
      await call(h().app, 'PUT', `/webhook/${w.id}/status`, {
        token: a.token,
        json: { webhook: { status: 'paused' } },
      });
      const pausedTest = await call(h().app, 'POST', `/webhook/${w.id}/test`, { token: a.token });
      expect(pausedTest.body).toMatchObject({
        status: -7,
        details: `webhook ${w.id} is paused; set it live to send it a test`,
      });
    });

    it('with the guard on, delivery to a loopback target is refused and logged, and nothing connects', async () => {
      const a = await h().account();
      const r = await receiver();
      // Stored while private targets were allowed (the suite's setting), delivered by a dispatcher that refuses them.
      const literal = await webhook(a, 'DLR', r.url('/literal'));
      const named = await webhook(a, 'DLR', `http://localhost:${r.port}/named`);
      const rebound = await webhook(a, 'DLR', `http://hooks.test:${r.port}/rebound`);
      const guard = createUrlGuard({
        allowPrivate: false,
        resolve: async (host) => {
          if (host === 'hooks.test') return [{ address: '127.0.0.1', family: 4 }];
          throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        },
      });
      const d = dispatcher({ guard });
      await emit(a.id, 'DLR', { message_id: 'ssrf' });
      await waitFor(async () => (await attemptsOf(rebound.id)).length === 1, 'the attempts');
      await settled(d);
      const errors = [];
      for (const w of [literal, named, rebound]) {
        const [attempt] = await attemptsOf(w.id);
        expect(attempt.http_code).toBeNull();
        // Nothing answered: the log has the request it would have sent and no answer.
        expect(attempt.response_body).toBeNull();
        expect(JSON.parse(attempt.request_body ?? '')).toEqual({ message_id: 'ssrf' });
        errors.push(attempt.error);
        expect((await deliveriesOf(w.id))[0].state).toBe('pending');
      }
      expect(errors).toEqual([
        'refused by the URL guard: 127.0.0.1 is a loopback address',
        'refused by the URL guard: host localhost is a loopback name',
        'refused by the URL guard: host hooks.test resolves to 127.0.0.1, a loopback address',
      ]);
      expect(r.connections).toBe(0);
      expect(r.requests).toHaveLength(0);
    });

    it('an attempt keeps the request and answer it logged after its event is pruned, and erasing the number removes it', async () => {
      const a = await h().account();
      // The answer repeats the number it was sent: erasing the number takes that answer too.
      const r = await receiver((q) => ({
        status: 400,
        body: `unknown destination ${JSON.parse(q.body).destination}`,
      }));
      const w = await webhook(a, 'DLR', r.url());
      const d = dispatcher();
      await emit(a.id, 'DLR', { destination: '33655501234', status: 3 });
      await emit(a.id, 'DLR', { destination: '33655509999', status: 3 });
      await waitFor(async () => (await attemptsOf(w.id)).length === 2, 'the attempts');
      await settled(d);
      // As pruning leaves it: the attempt log outlives the events and deliveries it came from.
      await db().deleteFrom('webhook_deliveries').where('webhook_id', '=', w.id).execute();
      await db().deleteFrom('events').where('account_id', '=', a.id).execute();
      const log = await call(h().app, 'GET', `/webhook/${w.id}/deliveries`, { token: a.token });
      expect(log.body.deliveries.map((x: { request_body: string }) => JSON.parse(x.request_body))).toEqual([
        { destination: '33655509999', status: 3 },
        { destination: '33655501234', status: 3 },
      ]);
      expect(log.body.deliveries[1]).toMatchObject({
        http_code: '400',
        response_body: 'unknown destination 33655501234',
      });

      const erased = await call(h().app, 'POST', '/erase', {
        token: a.token,
        json: { erase: { number: '33655501234' } },
      });
      expect(erased.body.removed.webhook_attempts).toBe(1);
      const left = await attemptsOf(w.id);
      expect(left).toHaveLength(1);
      expect(left[0].request_body).toContain('33655509999');
    });

    it('a dispatcher with room leases deliveries as it fans the events out; what exceeds its room waits pending', async () => {
      const a = await h().account();
      const r = await receiver();
      const w1 = await webhook(a, 'DLR', r.url());
      const w2 = await webhook(a, 'DLR', r.url());
      await emit(a.id, 'DLR', { message_id: 'first' });
      await emit(a.id, 'DLR', { message_id: 'second' });
      const service = h().deps.services.webhookDeliveries;
      // Two events, two webhooks each: four deliveries, room for three in all and for one of w2's.
      const fanned = await service.fanOut(10, { events: 3, room: (id) => (id === w2.id ? 1 : 10) });
      expect(fanned.events).toBe(2);
      expect(fanned.leftPending).toBe(true);
      expect(fanned.claimed.map((c) => [c.webhookId, JSON.parse(c.body).message_id, c.attempt])).toEqual([
        [w1.id, 'first', 1],
        [w2.id, 'first', 1],
        [w1.id, 'second', 1],
      ]);
      const rows = [...(await deliveriesOf(w1.id)), ...(await deliveriesOf(w2.id))];
      expect(rows.map((d) => d.state).sort()).toEqual(['pending', 'sending', 'sending', 'sending']);
      // The one left pending is the next claim's; nothing else is left to claim.
      const { claimed } = await service.claim(10, () => 10, []);
      expect(claimed.map((c) => [c.webhookId, JSON.parse(c.body).message_id])).toEqual([[w2.id, 'second']]);
      expect((await service.claim(10, () => 10, [])).claimed).toEqual([]);
      // Without room, the events' deliveries all wait pending, as before.
      await emit(a.id, 'DLR', { message_id: 'third' });
      const unleased = await service.fanOut(10);
      expect(unleased).toEqual({ events: 1, claimed: [], leftPending: true });
    });

    it('a retry that came due is not starved by new events that keep filling the room as they are fanned out', async () => {
      const a = await h().account();
      const order: string[] = [];
      const retried = await receiver((_q, i) => {
        order.push(`retry ${i}`);
        return { status: i === 0 ? 500 : 204 };
      });
      const busy = await receiver((_q, i) => {
        order.push(`busy ${i}`);
        return { status: 204 };
      });
      const wr = await webhook(a, 'MO', retried.url());
      const b = await h().account();
      await webhook(b, 'MO', busy.url());
      // No polls: every step is a wake-up, by this test or by deliveries finishing.
      const d = dispatcher({ maxClaimed: 4, pollMs: 60 * minute });
      await emit(a.id, 'MO', { message: 'retry me' });
      d.wake();
      await waitFor(() => retried.requests.length === 1, 'the first attempt');
      await settled(d);
      // The last step's claim found nothing: new events would be leased as they are fanned out.
      const [pending] = await deliveriesOf(wr.id);
      expect(pending).toMatchObject({ state: 'pending', attempts: 1 });
      clock().set(pending.next_attempt_at);
      const events = 20;
      for (let i = 0; i < events; i++) await emit(b.id, 'MO', { n: i });
      d.wake();
      await waitFor(
        () => retried.requests.length === 2 && busy.requests.length === events,
        'the retry and every new event',
      );
      // The first step leased four new events (all its room) and left the other sixteen pending, behind the
      // retry, due before them: the next claim took it first.
      expect(order.indexOf('retry 1'), order.join(', ')).toBeLessThanOrEqual(8);
      await settled(d);
    });

    it('new events become deliveries only as the dispatcher has room to send them: the rest wait as events', async () => {
      const a = await h().account();
      const slow = await receiver(() => ({ hang: true }));
      const w = await webhook(a, 'MO', slow.url());
      const events = 20;
      for (let i = 0; i < events; i++) await emit(a.id, 'MO', { n: i });
      const d = dispatcher({ maxClaimed: 4, pollMs: 60 * minute, requestTimeoutMs: 60 * second });
      d.wake();
      await waitFor(() => slow.requests.length === 4, 'the first four requests');
      // Each delivery was written leased, to be sent at once: none waits pending for a claim's update.
      expect((await deliveriesOf(w.id)).map((row) => row.state)).toEqual([
        'sending',
        'sending',
        'sending',
        'sending',
      ]);
      const waiting = await db()
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('fanned_out', '=', 0)
        .executeTakeFirstOrThrow();
      expect(Number(waiting.n)).toBe(events - 4);
      expect(d.held).toBe(4);
    });

    it('a delivery leased by a dispatcher that died is sent once its lease expires', async () => {
      const a = await h().account();
      const r = await receiver();
      const w = await webhook(a, 'DLR', r.url());
      await emit(a.id, 'DLR', { message_id: 'orphan' });
      // A dispatcher fans out and claims, then dies before sending.
      const service = h().deps.services.webhookDeliveries;
      expect((await service.fanOut(10)).events).toBeGreaterThanOrEqual(1);
      const { claimed } = await service.claim(10, () => 10, []);
      expect(claimed.map((c) => c.webhookId)).toContain(w.id);
      const d = dispatcher();
      await probePass(d);
      expect(r.requests).toHaveLength(0);
      const [leased] = await deliveriesOf(w.id);
      expect(leased.state).toBe('sending');
      clock().set(leased.lease_until! + 1);
      d.wake();
      await waitFor(() => r.requests.length === 1, 'the delivery after the lease');
      await settled(d);
      expect((await deliveriesOf(w.id))[0]).toMatchObject({ state: 'delivered', attempts: 1 });
    });

    it('stopping cuts requests still in flight after the grace period and gives them back, uncounted', async () => {
      const a = await h().account();
      const r = await receiver((_q, i) => (i === 0 ? { hang: true } : { status: 200 }));
      const w = await webhook(a, 'MO', r.url());
      const d = dispatcher({ stopGraceMs: 50, requestTimeoutMs: 30_000 });
      await emit(a.id, 'MO', { message: 'in flight at shutdown' });
      await waitFor(() => r.requests.length === 1, 'the request');
      await stops.pop()!();
      expect(d.held).toBe(0);
      expect((await deliveriesOf(w.id))[0]).toMatchObject({
        state: 'pending',
        attempts: 0,
        lease_until: null,
      });
      expect(await attemptsOf(w.id)).toEqual([]);
      const next = dispatcher();
      await waitFor(() => r.requests.length === 2, 'the delivery by the next dispatcher');
      await settled(next);
      expect((await attemptsOf(w.id)).map((x) => [x.attempt, x.http_code])).toEqual([[1, 200]]);
    });

    it('two dispatchers on one database deliver each event once', async () => {
      const a = await h().account();
      const r = await receiver();
      const one = await webhook(a, 'DLR', r.url('/one'));
      const two = await webhook(a, 'DLR', r.url('/two'));
      // On PostgreSQL, a second process: its own connection pool to the same database. SQLite has one writer
      // per process (and better-sqlite3 blocks the thread while it waits for the lock), so there both share it.
      let deliveries = h().deps.services.webhookDeliveries;
      if (h().dialect === 'postgres') {
        const other = await createDeps(h().config, { clock: h().clock, logger: pino({ level: 'silent' }) });
        extraDeps.push(other);
        deliveries = other.services.webhookDeliveries;
      }
      const d1 = dispatcher({ fanOutBatch: 7, maxClaimed: 16 });
      const d2 = dispatcher({ fanOutBatch: 7, maxClaimed: 16, deliveries });
      const events = 150;
      for (let i = 0; i < events; i++) await emit(a.id, 'DLR', { n: i });
      await waitFor(() => r.requests.length >= 2 * events, 'every delivery', 20_000);
      await settled(d1, d2);
      expect(r.requests).toHaveLength(2 * events);
      const ids = r.requests.map((q) => q.headers['webhook-id']);
      expect(new Set(ids).size).toBe(2 * events);
      for (const w of [one, two]) {
        const rows = await deliveriesOf(w.id);
        expect(rows).toHaveLength(events);
        expect(rows.every((x) => x.state === 'delivered' && x.attempts === 1)).toBe(true);
      }
    });

    it('end to end: POST /send, the worker and the simulator, then the DLR webhook carries the gsmsmsid', async () => {
      const a = await h().account();
      const r = await receiver();
      await webhook(a, 'DLR', r.url('/dlr'));
      const worker = testDeliveryWorker(h(), deliveringSimulator(), {}, quietLog);
      await worker.start();
      stops.push(() => worker.stop());
      dispatcher();
      const sent = await call(h().app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Your code is 1234', pushtype: 'alert', sender: 'Pigeon' },
            recipients: { gsm: [{ value: '33612345678', gsmsmsid: 'order-77' }] },
          },
        },
      });
      expect(sent.body.status, sent.body.details).toBe(1);
      await waitFor(() => r.requests.length === 1, 'the DLR webhook', 15_000);
      expect(JSON.parse(r.requests[0].body)).toEqual({
        date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?[+-]\d\d:\d\d$/),
        status: 3,
        destination: '33612345678',
        message_id: 'order-77',
        campaign_id: String(sent.body.ticket),
        country_code: 'FR',
      });
    });
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);
