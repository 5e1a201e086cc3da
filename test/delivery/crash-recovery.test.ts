// Prompt recovery after a crash, with real worker processes: a worker killed with SIGKILL has its messages
// and webhook deliveries taken over by a live one within seconds (not a long row lease later), a live worker
// keeps what it holds however long it takes to send, and a worker frozen with SIGSTOP past its lease sends
// nothing of what it lost when it wakes up.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { appendEvents } from '../../src/store/outbox.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// The processes run the bundle `npm start` runs (dist/main.js), which the suite's global set-up built: it
// starts in a fraction of the time tsx takes to compile src/ in each process.
const bin = join(import.meta.dirname, '..', '..', 'dist', 'main.js');
const leaseSeconds = 5;
const leaseMs = leaseSeconds * 1000;
const window = 10;
/** What "within seconds" means here: the lease, a sweep, a claim and the sends, with room for a loaded machine. */
const takeoverBoundMs = 25_000;

describeEachDialect(
  'crash recovery',
  (h) => {
    const children: ChildProcess[] = [];
    const smscs: TestSmsc[] = [];
    const receivers: WebhookReceiver[] = [];
    afterEach(async () => {
      for (const child of children.splice(0)) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
      }
      for (const smsc of smscs.splice(0)) await smsc.close();
      for (const r of receivers.splice(0)) await r.close();
    });

    /**
     * Freezes `child` with SIGSTOP outside a write transaction. On SQLite a process frozen inside one keeps the
     * database's one write lock, and every other process waits for it to wake (SQLite's single writer, not
     * Pigeon's leases, which these tests are about); so the freeze is taken again, a moment later, until a
     * write lock can be had while the child is stopped. On PostgreSQL a stopped process holds no lock others
     * need here.
     */
    async function freeze(child: ChildProcess): Promise<void> {
      for (let tries = 0; ; tries++) {
        child.kill('SIGSTOP');
        if (h().dialect !== 'sqlite') return;
        const probe = new Database(h().databaseUrl, { timeout: 0 });
        try {
          probe.exec('BEGIN IMMEDIATE; ROLLBACK');
          return;
        } catch (error) {
          if (tries >= 50) throw error;
        } finally {
          probe.close();
        }
        child.kill('SIGCONT');
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
      }
    }

    function start(env: Record<string, string>): ChildProcess {
      const child = spawn(process.execPath, [bin, 'serve'], {
        env: {
          ...process.env,
          DATABASE_URL: h().databaseUrl,
          LEASE_SECONDS: String(leaseSeconds),
          WORKER_POLL_MS: '20',
          LOG_LEVEL: 'error',
          ...env,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    }

    /** A delivery worker process that leases every due message in one batch. */
    const deliveryWorker = (smsc: TestSmsc, env: Record<string, string> = {}) =>
      start({
        ROLE: 'delivery',
        TRANSPORT: 'smpp',
        SMPP_URL: smsc.url,
        SMPP_BINDS: '1',
        SMPP_WINDOW: String(window),
        WORKER_BATCH_SIZE: '1000',
        ...env,
      });

    async function kill(child: ChildProcess): Promise<void> {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }

    /** The lease term a process holds on a queue: the newest row it registered. */
    async function termOf(child: ChildProcess, queue: string) {
      return h()
        .deps.store.db.selectFrom('lease_holders')
        .select(['id', 'started_at', 'lease_until'])
        .where('pid', '=', child.pid!)
        .where('queue', '=', queue)
        .orderBy('id', 'desc')
        .executeTakeFirst();
    }

    /** Waits until the process has renewed its term `byMs` past where it was: it held on that long. */
    async function heldFor(child: ChildProcess, queue: string, byMs: number): Promise<void> {
      const from = (await termOf(child, queue))!.lease_until;
      await waitFor(
        async () => ((await termOf(child, queue))?.lease_until ?? 0) > from + byMs,
        `the term renewed ${byMs} ms on`,
        30_000,
      );
    }

    /** Waits until the process, thawed, has found its term lapsed and begun a new one, renewed once since. */
    async function onNewTerm(child: ChildProcess, queue: string, lapsed: number): Promise<void> {
      await waitFor(
        async () => {
          const term = await termOf(child, queue);
          return term !== undefined && term.id !== lapsed && term.lease_until > term.started_at + leaseMs;
        },
        'a new term, renewed',
        30_000,
      );
    }

    async function campaign(size: number): Promise<number> {
      // The worker processes run on the system clock: messages must be due now, not at the harness's date.
      h().clock.set(Date.now());
      const a = await h().account({ credits: size });
      const recipients = Array.from({ length: size }, (_, i) => ({ value: `336${String(30000000 + i)}` }));
      const r = await call(h().app, 'POST', '/send', {
        token: a.token,
        json: { sms: { message: { text: 'Recovery', pushtype: 'alert' }, recipients: { gsm: recipients } } },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return Number(r.body.ticket);
    }

    const messagesOf = (ticket: number) =>
      h()
        .deps.store.db.selectFrom('messages')
        .select(['state', 'lease_owner'])
        .where('campaign_id', '=', ticket)
        .execute();

    /** Messages of the campaign the SMSC accepted (a receipt sent to a killed connection is never offered again). */
    const accepted = async (ticket: number) =>
      (await messagesOf(ticket)).filter((m) => m.state === 'submitted' || m.state === 'delivered').length;

    /**
     * A campaign leased whole by a first worker (A) whose window is full of submits the SMSC does not answer
     * yet, with a second worker (B) started beside it.
     */
    async function busyHolderAndSecond(size: number) {
      const smsc = await new TestSmsc().listen();
      smscs.push(smsc);
      smsc.holdResponses = true;
      const ticket = await campaign(size);
      const a = deliveryWorker(smsc, { SMPP_RESPONSE_TIMEOUT_MS: '120000' });
      await waitFor(() => smsc.submits.length === window, 'the window of the first worker full', 30_000);
      const aPort = smsc.submits[0].clientPort;
      const b = deliveryWorker(smsc);
      await waitFor(
        async () => (await termOf(b, 'messages')) !== undefined,
        'the second worker started',
        30_000,
      );
      const termA = (await termOf(a, 'messages'))!;
      return {
        smsc,
        ticket,
        a,
        termA,
        sentByA: () => smsc.submits.filter((s) => s.clientPort === aPort).length,
      };
    }

    it('a worker killed with SIGKILL mid-campaign has its messages taken by a live worker within seconds; while it lived, the other took none of them', async () => {
      const size = 200;
      const { smsc, ticket, a, termA } = await busyHolderAndSecond(size);
      // A holds the whole campaign past the end of its rows' first lease and a sweep, while B polls and sweeps:
      // B sends nothing, and every message is still A's.
      await heldFor(a, 'messages', leaseMs + 1000);
      expect(smsc.submits).toHaveLength(window);
      expect(
        (await messagesOf(ticket)).every((m) => m.state === 'sending' && m.lease_owner === termA.id),
      ).toBe(true);

      const killedAt = Date.now();
      await kill(a);
      smsc.holdResponses = false;
      smsc.release();
      await waitFor(async () => (await accepted(ticket)) === size, 'every message accepted', takeoverBoundMs);
      expect(Date.now() - killedAt).toBeLessThan(takeoverBoundMs);
      expect(new Set(smsc.submits.map((s) => s.destination)).size).toBe(size);
      // Only what A had submitted but not recorded (its window) goes twice.
      expect(smsc.submits.length - size).toBeLessThanOrEqual(window);
    }, 120_000);

    it('a worker frozen with SIGSTOP past its lease sends nothing of what another took over once it wakes up', async () => {
      const size = 200;
      const { smsc, ticket, a, termA, sentByA } = await busyHolderAndSecond(size);
      await freeze(a);
      const frozenAt = Date.now();
      // A's answers wait in its socket; B's come at once.
      smsc.holdResponses = false;
      smsc.release();
      await waitFor(async () => (await accepted(ticket)) === size, 'every message accepted', takeoverBoundMs);
      expect(Date.now() - frozenAt).toBeLessThan(takeoverBoundMs);
      expect(sentByA()).toBe(window);

      // Awake, A reads its answers, finds its term lapsed, and drops the 190 messages it still held in memory.
      a.kill('SIGCONT');
      await onNewTerm(a, 'messages', termA.id);
      expect(sentByA()).toBe(window);
      expect(new Set(smsc.submits.map((s) => s.destination)).size).toBe(size);
      expect(smsc.submits.length - size).toBeLessThanOrEqual(window);
      expect(await accepted(ticket)).toBe(size);
    }, 120_000);

    /** A webhook on a loopback receiver that hangs while `hanging`, and `count` DLR events for it. */
    async function hangingWebhook(count: number) {
      const receiver = await new WebhookReceiver().listen();
      receivers.push(receiver);
      const state = { hanging: true };
      receiver.answer = () => (state.hanging ? { hang: true } : { status: 200 });
      const account = await h().account();
      const r = await call(h().app, 'POST', '/webhook', {
        token: account.token,
        json: { webhook: { type: 'DLR', url: receiver.url() } },
      });
      expect(r.body.status, r.body.details).toBe(1);
      const webhookId = Number(r.body.webhook.webhook_id);
      const events = Array.from({ length: count }, (_, i) => ({
        account_id: account.id,
        campaign_id: null,
        type: 'DLR' as const,
        payload: JSON.stringify({ n: i }),
      }));
      await appendEvents(h().deps.store.db, events, Date.now());
      return { receiver, state, webhookId };
    }

    /**
     * A webhook dispatcher process: 4 requests in flight to one webhook, the rest of its deliveries queued, and
     * kept queued while the receiver hangs (a webhook slow for WEBHOOK_SLOW_MS would give them back).
     */
    const dispatcher = () =>
      start({
        ROLE: 'webhooks',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_CONCURRENCY_PER_WEBHOOK: '4',
        WEBHOOK_CONCURRENCY: '64',
        WEBHOOK_TIMEOUT_MS: '120000',
        WEBHOOK_SLOW_MS: '120000',
      });

    const deliveriesOf = (webhookId: number) =>
      h()
        .deps.store.db.selectFrom('webhook_deliveries')
        .select(['id', 'state', 'lease_owner'])
        .where('webhook_id', '=', webhookId)
        .execute();

    it('a dispatcher killed with SIGKILL has its webhook deliveries sent by a live one within seconds', async () => {
      const count = 40;
      const { receiver, state, webhookId } = await hangingWebhook(count);
      const a = dispatcher();
      await waitFor(() => receiver.requests.length === 4, 'four requests hanging', 30_000);
      const b = dispatcher();
      await waitFor(
        async () => (await termOf(b, 'webhook_deliveries')) !== undefined,
        'the second dispatcher',
        30_000,
      );
      // A holds every delivery (4 in flight, 36 queued behind them) past their first lease and a sweep; B takes
      // none.
      const termA = (await termOf(a, 'webhook_deliveries'))!;
      await heldFor(a, 'webhook_deliveries', leaseMs + 1000);
      expect(receiver.requests).toHaveLength(4);
      expect(
        (await deliveriesOf(webhookId)).every((d) => d.state === 'sending' && d.lease_owner === termA.id),
      ).toBe(true);

      state.hanging = false;
      const killedAt = Date.now();
      await kill(a);
      await waitFor(
        async () => (await deliveriesOf(webhookId)).every((d) => d.state === 'delivered'),
        'every delivery delivered',
        takeoverBoundMs,
      );
      expect(Date.now() - killedAt).toBeLessThan(takeoverBoundMs);
      const ids = receiver.requests.map((q) => q.headers['webhook-id']);
      expect(new Set(ids).size).toBe(count);
      // Only the four A had in flight go twice.
      expect(ids.length - count).toBeLessThanOrEqual(4);
    }, 90_000);

    it('a dispatcher frozen with SIGSTOP past its lease sends nothing of what another took over once it wakes up', async () => {
      const count = 40;
      const { receiver, state, webhookId } = await hangingWebhook(count);
      const a = dispatcher();
      await waitFor(() => receiver.requests.length === 4, 'four requests hanging', 30_000);
      const b = dispatcher();
      await waitFor(
        async () => (await termOf(b, 'webhook_deliveries')) !== undefined,
        'the second dispatcher',
        30_000,
      );
      const frozenTerm = (await termOf(a, 'webhook_deliveries'))!;

      state.hanging = false;
      await freeze(a);
      const frozenAt = Date.now();
      await waitFor(
        async () => (await deliveriesOf(webhookId)).every((d) => d.state === 'delivered'),
        'every delivery delivered by the other dispatcher',
        takeoverBoundMs,
      );
      expect(Date.now() - frozenAt).toBeLessThan(takeoverBoundMs);
      const received = receiver.requests.length;

      a.kill('SIGCONT');
      await onNewTerm(a, 'webhook_deliveries', frozenTerm.id);
      // The 36 deliveries A had queued when it froze were dropped, not sent; the four it had in flight are
      // still waiting for their answers on its connections, which the receiver answers now.
      expect(receiver.requests).toHaveLength(received);
      receiver.releaseHanging();
      const ids = receiver.requests.map((q) => q.headers['webhook-id']);
      expect(new Set(ids).size).toBe(count);
      expect(ids.length - count).toBeLessThanOrEqual(4);
    }, 90_000);
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);
