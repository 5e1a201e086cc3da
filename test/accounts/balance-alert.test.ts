// BALANCE_ALERT: a debit that takes the credits to or below the account's trigger writes one event, one
// e-mail job and one free SMS job in its own transaction; the alert worker sends the e-mail through a real
// SMTP server and queues the SMS as a free message. Once per crossing; re-armed above the trigger.
import pino from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type AlertWorker, createAlertWorker, noSmtpReason } from '../../src/accounts/alert-worker.ts';
import { createSmtpMailer, type Mailer } from '../../src/accounts/mailer.ts';
import { loadConfig } from '../../src/config.ts';
import { SimulatorTransport } from '../../src/delivery/simulator/simulator-transport.ts';
import type { OutboundPart } from '../../src/delivery/transport.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import { buildApi, startRuntime } from '../../src/runtime.ts';
import { zonedTime } from '../../src/shared/zoned-time.ts';
import { testEventPayload } from '../../src/webhooks/test-event.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { SmtpSink } from '../helpers/smtp-sink.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

const quiet = process.env.DEBUG_ALERTS
  ? { info: console.log, warn: console.log, error: console.log }
  : { info() {}, warn() {}, error() {} };

const from = 'alerts@pigeon.test';
let mailboxCounter = 0;
const newMailbox = () => `ops${++mailboxCounter}-${Math.random().toString(36).slice(2, 8)}@example.com`;

describeEachDialect('balance alert', (h) => {
  const sink = new SmtpSink();
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    await sink.listen();
  });
  afterAll(async () => {
    await sink.close();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** `null`: no SMTP server configured. */
  function startWorker(mailer: Mailer | null = createSmtpMailer({ url: sink.url(), from })): AlertWorker {
    const worker = createAlertWorker({
      alerts: h().deps.services.balanceAlerts,
      mailer: mailer ?? undefined,
      log: quiet,
      options: { pollMs: 10, batchSize: 10, sweepMs: 20 },
    });
    worker.start();
    cleanups.push(() => worker.stop());
    return worker;
  }

  async function notify(account: TestAccount, notification: Record<string, string>) {
    const r = await call(h().app, 'PUT', '/notification/balance', {
      token: account.token,
      json: { notification },
    });
    expect(r.body.status, r.body.details).toBe(1);
  }

  /** A setting alerting by e-mail and SMS at `trigger`; answers the mailbox and the phone number. */
  async function alertAt(account: TestAccount, trigger: number, overrides: Record<string, string> = {}) {
    const email = newMailbox();
    // Not ending in 0000, 0001 or 0002, which the carrier simulator always fails.
    const phone = `3361${String(account.id).padStart(4, '0')}555`;
    await notify(account, {
      alert_trigger: String(trigger),
      alert_email: '1',
      alert_gsm: '1',
      email,
      phone_number: phone,
      ...overrides,
    });
    return { email, phone };
  }

  let numberCounter = 0;
  /** Sends one single-part SMS to `count` distinct numbers: costs `count` credits. */
  async function send(account: TestAccount, count = 1, app = h().app) {
    const gsm = Array.from({ length: count }, () => ({
      value: `3367${String(++numberCounter).padStart(7, '0')}`,
    }));
    const r = await call(app, 'POST', '/send', {
      token: account.token,
      json: { sms: { message: { text: 'Hello', pushtype: 'alert' }, recipients: { gsm } } },
    });
    expect(r.body.status, r.body.details).toBe(1);
    expect(r.body.cost).toBe(count);
    return r.body as { ticket: string; credits: number };
  }

  async function credits(account: TestAccount): Promise<number> {
    return (await call(h().app, 'GET', '/credits', { token: account.token })).body.credits;
  }

  async function alertEvents(accountId: number) {
    const rows = await h()
      .deps.store.db.selectFrom('events')
      .select(['payload', 'campaign_id'])
      .where('account_id', '=', accountId)
      .where('type', '=', 'BALANCE_ALERT')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...JSON.parse(r.payload), campaign_id: r.campaign_id }));
  }

  const jobs = (accountId: number) => h().deps.services.balanceAlerts.jobsOf(accountId);

  /** The free messages of the account: those of its campaigns that cost nothing. */
  function freeMessages(accountId: number) {
    return h()
      .deps.store.db.selectFrom('messages')
      .innerJoin('campaigns', 'campaigns.id', 'messages.campaign_id')
      .select([
        'messages.recipient',
        'messages.text',
        'messages.state',
        'messages.parts',
        'campaigns.sender',
        'campaigns.pushtype',
        'campaigns.cost',
      ])
      .where('campaigns.account_id', '=', accountId)
      .where('campaigns.cost', '=', 0)
      .orderBy('messages.id')
      .execute();
  }

  const mailsTo = (address: string) => sink.mails.filter((m) => m.rcptTo.includes(address));

  async function allDone(accountId: number) {
    return waitFor(async () => {
      const all = await jobs(accountId);
      return all.length > 0 && all.every((j) => j.state === 'sent' || j.state === 'failed') && all;
    }, 'the alert jobs to finish');
  }

  it('a send that crosses the trigger alerts once: one event, one e-mail, one free SMS, credits untouched', async () => {
    const a = await h().account({ credits: 12 });
    const { email, phone } = await alertAt(a, 10);
    await send(a);
    expect(await alertEvents(a.id)).toEqual([]);
    expect(await jobs(a.id)).toEqual([]);

    await send(a);
    // Monday 5 January 2026, 09:00 UTC is 10:00 in Paris.
    expect(await alertEvents(a.id)).toEqual([
      { balance: 10, trigger: 10, date: '2026-01-05 10:00:00', campaign_id: null },
    ]);
    expect((await jobs(a.id)).map((j) => [j.kind, j.recipient, j.state]).sort()).toEqual([
      ['email', email, 'pending'],
      ['sms', phone, 'pending'],
    ]);

    startWorker();
    await allDone(a.id);
    await waitFor(() => mailsTo(email).length === 1, 'the alert e-mail');
    const [mail] = mailsTo(email);
    expect(mail.mailFrom).toBe(from);
    expect(mail.rcptTo).toEqual([email]);
    expect(mail.headers.to).toBe(email);
    expect(mail.headers.from).toBe(from);
    expect(mail.headers.subject).toBe('Pigeon: your balance is 10 credits (alert threshold 10)');
    expect(mail.text).toContain(
      `The balance of your Pigeon account ${a.id} is 10 credits, at or below the alert threshold of 10 credits (2026-01-05 10:00:00).`,
    );
    // The credits of SMTP_URL are the ones the client logged in with.
    expect([mail.user, mail.password]).toEqual(['pigeon', 'secret']);

    expect(await freeMessages(a.id)).toEqual([
      {
        recipient: phone,
        text: 'Pigeon: your balance is 10 credits, at or below your alert threshold of 10.',
        state: 'queued',
        parts: 1,
        sender: 'Pigeon',
        pushtype: 'alert',
        cost: 0,
      },
    ]);
    expect(await credits(a)).toBe(10);

    // Further sends below the trigger alert no more.
    await send(a);
    await send(a, 2);
    expect(await credits(a)).toBe(7);
    expect(await alertEvents(a.id)).toHaveLength(1);
    expect(await jobs(a.id)).toHaveLength(2);
    expect(await freeMessages(a.id)).toHaveLength(1);
    expect(mailsTo(email)).toHaveLength(1);
  });

  it("the alert SMS is the operator's message, not the customer's campaign: GET /campaigns and GET /campaign/:ticket leave it out", async () => {
    const a = await h().account({ credits: 12 });
    await alertAt(a, 11, { alert_email: '0' });
    const first = await send(a);
    const second = await send(a);
    startWorker();
    await allDone(a.id);
    expect(await freeMessages(a.id)).toHaveLength(1);
    const alertCampaign = await h()
      .deps.store.db.selectFrom('campaigns')
      .select('id')
      .where('account_id', '=', a.id)
      .where('cost', '=', 0)
      .executeTakeFirstOrThrow();
    const list = await call(h().app, 'GET', '/campaigns', { token: a.token });
    expect(list.body).toMatchObject({ status: 1, totalRecords: 2, totalDisplayRecords: 2 });
    expect(list.body.campaigns.map((c: { id: string }) => c.id).sort()).toEqual(
      [first.ticket, second.ticket].sort(),
    );
    expect(list.body.campaigns.map((c: { text: string }) => c.text)).not.toContain(
      expect.stringContaining('your balance'),
    );
    const read = await call(h().app, 'GET', `/campaign/${alertCampaign.id}`, { token: a.token });
    expect(read.body).toMatchObject({ status: -5 });
  });

  it('the free SMS goes out through the delivery worker from ALERT_SENDER, and no credit or ledger line moves', async () => {
    const a = await h().account({ credits: 3 });
    const { phone } = await alertAt(a, 2, { alert_email: '0' });
    await send(a);
    startWorker();
    await allDone(a.id);

    const transport = new SimulatorTransport({
      dlrDelayMs: 0,
      outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }],
    });
    const submitted: OutboundPart[] = [];
    const submit = transport.submit.bind(transport);
    transport.submit = (part) => {
      submitted.push(part);
      return submit(part);
    };
    const delivery = testDeliveryWorker(h(), transport, { validityMs: 3_600_000 }, quiet);
    await delivery.start();
    cleanups.push(() => delivery.stop());
    await waitFor(
      async () => (await freeMessages(a.id))[0]?.state === 'delivered',
      'the alert SMS delivered',
    );
    const toPhone = submitted.filter((p) => p.destination === phone);
    expect(toPhone.map((p) => [p.sender, Buffer.from(p.payload).toString('latin1')])).toEqual([
      ['Pigeon', 'Pigeon: your balance is 2 credits, at or below your alert threshold of 2.'],
    ]);
    expect(await credits(a)).toBe(2);
    const ledger = await h()
      .deps.store.db.selectFrom('credit_ledger')
      .select(['delta', 'reason'])
      .where('account_id', '=', a.id)
      .orderBy('id')
      .execute();
    expect(ledger.map((l) => [Number(l.delta), l.reason])).toEqual([
      [3, 'initial'],
      [-1, 'campaign'],
    ]);
    // Its receipt is a DLR event like any other; it is not another balance alert.
    expect(await alertEvents(a.id)).toHaveLength(1);
  });

  it('credits added above the trigger re-arm it, credits up to the trigger do not; a refund re-arms too', async () => {
    const a = await h().account({ credits: 11 });
    await alertAt(a, 10, { alert_email: '0', alert_gsm: '0' });
    await send(a, 3);
    expect(await alertEvents(a.id)).toHaveLength(1);

    // 8 + 2 = 10: at the trigger, not above it, so still disarmed.
    await h().deps.services.credits.addCredits(a.id, 2);
    await send(a);
    expect(await alertEvents(a.id)).toHaveLength(1);

    // 9 + 5 = 14: above it. The next crossing alerts again, and only the crossing one.
    await h().deps.services.credits.addCredits(a.id, 5);
    await send(a, 3);
    expect(await alertEvents(a.id)).toHaveLength(1);
    await send(a);
    await send(a);
    expect((await alertEvents(a.id)).map((e) => e.balance)).toEqual([8, 10]);

    // 9 + 3 = 12, re-armed; a campaign of 5 crosses, and cancelling it gives 12 back: re-armed by the refund.
    await h().deps.services.credits.addCredits(a.id, 3);
    const campaign = await send(a, 5);
    expect(campaign.credits).toBe(7);
    expect((await alertEvents(a.id)).map((e) => e.balance)).toEqual([8, 10, 7]);
    const cancelled = await call(h().app, 'DELETE', `/send/${campaign.ticket}`, { token: a.token });
    expect(cancelled.body.credits).toBe(12);
    await send(a, 2);
    expect((await alertEvents(a.id)).map((e) => e.balance)).toEqual([8, 10, 7, 10]);
  });

  it('a new trigger re-arms the alert; re-saving the same trigger does not', async () => {
    const a = await h().account({ credits: 6 });
    const { email } = await alertAt(a, 5, { alert_gsm: '0' });
    await send(a);
    expect(await alertEvents(a.id)).toHaveLength(1);

    // Same trigger, another address: the crossing already alerted stays alerted.
    await notify(a, { alert_trigger: '5', email: newMailbox() });
    await send(a);
    expect(await alertEvents(a.id)).toHaveLength(1);

    // A new trigger, even one the balance is already under, alerts at the next debit, once.
    await notify(a, { alert_trigger: '100', email });
    await send(a);
    await send(a);
    expect(await alertEvents(a.id)).toEqual([
      expect.objectContaining({ balance: 5, trigger: 5 }),
      expect.objectContaining({ balance: 3, trigger: 100 }),
    ]);
  });

  it("the event's date is SMSFactor's Y-m-d H:i:s to the second, as the webhook's test event has it", async () => {
    const a = await h().account({ credits: 3 });
    await notify(a, { alert_trigger: '2' });
    const start = h().clock.now();
    // An instant with milliseconds (10:00:01.750 in Paris): neither the real event nor the test event shows them.
    h().clock.set(Date.UTC(2026, 0, 5, 9, 0, 1, 750));
    try {
      await send(a);
      const [event] = await alertEvents(a.id);
      expect(event).toEqual({ balance: 2, trigger: 2, date: '2026-01-05 10:00:01', campaign_id: null });
      const sample = JSON.parse(
        testEventPayload('BALANCE_ALERT', a.id, h().clock.now(), zonedTime('Europe/Paris')),
      );
      expect(Object.keys(sample)).toEqual(['balance', 'trigger', 'date']);
      expect(sample.date).toBe(event.date);
    } finally {
      h().clock.set(start);
    }
  });

  it('alert_email "0" sends no e-mail, alert_gsm "0" no SMS; the webhook event is written either way', async () => {
    const noEmail = await h().account({ credits: 3 });
    const { email: unusedEmail, phone } = await alertAt(noEmail, 2, { alert_email: '0' });
    const noSms = await h().account({ credits: 3 });
    const { email } = await alertAt(noSms, 2, { alert_gsm: '0' });
    await send(noEmail);
    await send(noSms);
    expect(await alertEvents(noEmail.id)).toHaveLength(1);
    expect(await alertEvents(noSms.id)).toHaveLength(1);
    expect((await jobs(noEmail.id)).map((j) => j.kind)).toEqual(['sms']);
    expect((await jobs(noSms.id)).map((j) => j.kind)).toEqual(['email']);

    startWorker();
    await allDone(noEmail.id);
    await allDone(noSms.id);
    await waitFor(() => mailsTo(email).length === 1, 'the e-mail of the account that wants one');
    expect(mailsTo(unusedEmail)).toEqual([]);
    expect((await freeMessages(noEmail.id)).map((m) => m.recipient)).toEqual([phone]);
    expect(await freeMessages(noSms.id)).toEqual([]);
  });

  it('SMTP down: the e-mail is retried with backoff and delivered once it comes back', async () => {
    const down = new SmtpSink();
    await down.listen();
    cleanups.push(() => down.close());
    await down.close();
    const a = await h().account({ credits: 2 });
    const { email } = await alertAt(a, 1, { alert_gsm: '0' });
    await send(a);
    startWorker(createSmtpMailer({ url: down.url(), from }));

    const failedOnce = await waitFor(async () => {
      const [job] = await jobs(a.id);
      return job.attempts === 1 && job.state === 'pending' && job;
    }, 'the first failed attempt');
    expect(failedOnce.last_error).toMatch(/ECONNREFUSED|ECONNECTION|ESOCKET/);
    expect(failedOnce.next_attempt_at).toBe(h().clock.now() + 30_000);

    // Not due before its time, and retried when it is, 30 s then 60 s later.
    h().clock.advance(30_000);
    const failedTwice = await waitFor(async () => {
      const [job] = await jobs(a.id);
      return job.attempts === 2 && job.state === 'pending' && job;
    }, 'the second failed attempt');
    expect(failedTwice.next_attempt_at).toBe(h().clock.now() + 60_000);

    await down.listen();
    h().clock.advance(60_000);
    const [sent] = await allDone(a.id);
    expect(sent).toMatchObject({ state: 'sent', attempts: 3 });
    expect(down.mails.filter((m) => m.rcptTo.includes(email))).toHaveLength(1);
  });

  it('a server that refuses for now (4xx) gets the e-mail later; one that refuses for good (5xx) fails it', async () => {
    const picky = new SmtpSink();
    await picky.listen();
    cleanups.push(() => picky.close());
    picky.refuseWith = 451;
    const a = await h().account({ credits: 2 });
    const { email } = await alertAt(a, 1, { alert_gsm: '0' });
    await send(a);
    startWorker(createSmtpMailer({ url: picky.url(), from }));
    await waitFor(async () => {
      const [job] = await jobs(a.id);
      return job.attempts === 1 && job.state === 'pending';
    }, 'the refusal to be recorded');
    expect(picky.refused).toBe(1);
    picky.refuseWith = undefined;
    h().clock.advance(30_000);
    await allDone(a.id);
    expect(picky.mails.filter((m) => m.rcptTo.includes(email))).toHaveLength(1);

    picky.refuseWith = 550;
    const b = await h().account({ credits: 2 });
    await alertAt(b, 1, { alert_gsm: '0' });
    await send(b);
    const [failed] = await allDone(b.id);
    expect(failed).toMatchObject({ state: 'failed', attempts: 1 });
    expect(failed.last_error).toContain('550');
  });

  it('without SMTP_URL the e-mail job fails with the reason, and the SMS still goes', async () => {
    const a = await h().account({ credits: 2 });
    const { phone } = await alertAt(a, 1);
    await send(a);
    startWorker(null);
    const done = await allDone(a.id);
    const byKind = Object.fromEntries(done.map((j) => [j.kind, j]));
    expect(byKind.email).toMatchObject({ state: 'failed', attempts: 1, last_error: noSmtpReason });
    expect(byKind.sms).toMatchObject({ state: 'sent', attempts: 1, last_error: null });
    expect((await freeMessages(a.id)).map((m) => m.recipient)).toEqual([phone]);
  });

  it("tenant isolation: account A's crossing never alerts account B", async () => {
    const a = await h().account({ credits: 5 });
    const b = await h().account({ credits: 5 });
    const alertsA = await alertAt(a, 4);
    const alertsB = await alertAt(b, 4);
    await send(a);
    startWorker();
    await allDone(a.id);
    await waitFor(() => mailsTo(alertsA.email).length === 1, "A's e-mail");
    expect(await alertEvents(b.id)).toEqual([]);
    expect(await jobs(b.id)).toEqual([]);
    expect(await freeMessages(b.id)).toEqual([]);
    expect(mailsTo(alertsB.email)).toEqual([]);
    expect((await freeMessages(a.id)).map((m) => m.recipient)).toEqual([alertsA.phone]);
    // B is still armed: its own crossing alerts it, once.
    await send(b);
    expect(await alertEvents(b.id)).toHaveLength(1);
    expect(await alertEvents(a.id)).toHaveLength(1);
  });

  it('an unlimited sub-account spends its parent credits, so the parent setting alerts', async () => {
    const parent = await h().account({ credits: 3 });
    const child = await h().account({ credits: 0, parentId: parent.id, unlimited: true });
    await alertAt(parent, 2, { alert_email: '0', alert_gsm: '0' });
    await alertAt(child, 1000, { alert_email: '0', alert_gsm: '0' });
    await send(child);
    expect(await alertEvents(parent.id)).toEqual([expect.objectContaining({ balance: 2, trigger: 2 })]);
    expect(await alertEvents(child.id)).toEqual([]);
  });

  it('two sends crossing the trigger together, from two processes, alert once', async () => {
    // A second Pigeon on the same database, as another process would be: its own pool and send batcher.
    const other = await createDeps(h().config, { clock: h().clock, logger: pino({ level: 'silent' }) });
    const otherApp = buildApi({ config: h().config, logger: other.logger, services: other.services });
    await otherApp.ready();
    cleanups.push(async () => {
      await otherApp.close();
      await other.close();
    });
    const a = await h().account({ credits: 0 });
    await alertAt(a, 10, { alert_email: '0', alert_gsm: '0' });
    for (let round = 1; round <= 5; round++) {
      // 11 credits: each send of 1 ends at or below 10, whichever commits first.
      await h().deps.services.credits.addCredits(a.id, 11 - (await credits(a)));
      await Promise.all([send(a, 1), send(a, 1, otherApp)]);
      expect(await credits(a)).toBe(9);
      expect(await alertEvents(a.id)).toHaveLength(round);
    }
  });
});

describeEachDialect(
  'balance alert worker per ROLE',
  (h) => {
    it('ROLE=worker sends the alert e-mail through SMTP_URL from SMTP_FROM, and the BALANCE_ALERT webhook', async () => {
      const sink = await new SmtpSink().listen();
      const receiver = await new WebhookReceiver().listen();
      const config = loadConfig({
        DATABASE_URL: h().databaseUrl,
        ROLE: 'worker',
        WORKER_POLL_MS: '10',
        SMTP_URL: sink.url('relay', 'pw'),
        SMTP_FROM: 'noreply@pigeon.test',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        LOG_LEVEL: 'silent',
      });
      let deps: Deps | undefined;
      let stop: (() => Promise<void>) | undefined;
      try {
        deps = await createDeps(config, { logger: pino({ level: 'silent' }) });
        stop = (await startRuntime(deps)).stop;
        const a = await h().account({ credits: 5 });
        const email = newMailbox();
        await call(h().app, 'PUT', '/notification/balance', {
          token: a.token,
          json: { notification: { alert_trigger: '3', alert_email: '1', email } },
        });
        const hook = await call(h().app, 'POST', '/webhook', {
          token: a.token,
          json: { webhook: { type: 'BALANCE_ALERT', url: receiver.url() } },
        });
        expect(hook.body.status, hook.body.details).toBe(1);
        // The server runs on the system clock; an operator's deduction crosses the trigger like a send.
        await deps.services.credits.addCredits(a.id, -2);
        await waitFor(() => sink.mails.length === 1, 'the e-mail');
        expect(sink.mails[0]).toMatchObject({
          mailFrom: 'noreply@pigeon.test',
          rcptTo: [email],
          user: 'relay',
        });
        expect(sink.mails[0].headers.subject).toBe('Pigeon: your balance is 3 credits (alert threshold 3)');
        await waitFor(() => receiver.requests.length === 1, 'the webhook');
        const body = JSON.parse(receiver.requests[0].body);
        expect(body).toEqual({ balance: 3, trigger: 3, date: expect.any(String) });
        expect(body.date).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      } finally {
        await stop?.();
        await deps?.close();
        await sink.close();
        await receiver.close();
      }
    });
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);
