// The path of a message after POST /send: leased by the worker, submitted through a transport, its receipt
// recorded with a DLR event; replies become MO or STOP events for the account that wrote to the number.
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { SimulatorTransport } from '../../src/delivery/simulator/simulator-transport.ts';
import { type SmppOptions, SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import type { Transport } from '../../src/delivery/transport.ts';
import { nextOpening, parseSendingWindow } from '../../src/sms/sending-window.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { TestSmsc, testSmppOptions } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

const quiet = process.env.DEBUG_DELIVERY
  ? { info: console.log, warn: console.log, error: console.log }
  : { info() {}, warn() {}, error() {} };

/** The tests' SMPP options with two binds, as this file's SMSC scenarios expect. */
const smppOptions = (url: string, overrides: Partial<SmppOptions> = {}): SmppOptions =>
  testSmppOptions(url, { binds: 2, ...overrides });

describeEachDialect('delivery', (h) => {
  const running: { worker: DeliveryWorker; smsc?: TestSmsc }[] = [];
  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.worker.stop();
      await r.smsc?.close();
    }
  });

  async function startWorker(transport: Transport, smsc?: TestSmsc, validityMs = 48 * 3_600_000) {
    const window = parseSendingWindow({
      hours: '08:00-20:00',
      days: '1-6',
      holidays: 'FR',
      zone: 'Europe/Paris',
    });
    const worker = testDeliveryWorker(
      h(),
      transport,
      { validityMs, nextMarketingOpening: (instant) => nextOpening(window, instant) },
      quiet,
    );
    await worker.start();
    running.push({ worker, smsc });
    return worker;
  }

  async function send(
    account: TestAccount,
    recipients: { value: string; gsmsmsid?: string }[],
    text = 'Hello from Pigeon',
  ) {
    const r = await call(h().app, 'POST', '/send', {
      token: account.token,
      json: {
        sms: { message: { text, pushtype: 'alert', sender: 'Pigeon' }, recipients: { gsm: recipients } },
      },
    });
    expect(r.body.status, r.body.details).toBe(1);
    return Number(r.body.ticket);
  }

  const messagesOf = (ticket: number) =>
    h()
      .deps.store.db.selectFrom('messages')
      .select(['recipient', 'gsmsmsid', 'state', 'dlr_status', 'smsc_id'])
      .where('campaign_id', '=', ticket)
      .orderBy('seq')
      .execute();

  const eventsOf = async (accountId: number, type: string) =>
    (
      await h()
        .deps.store.db.selectFrom('events')
        .select('payload')
        .where('account_id', '=', accountId)
        .where('type', '=', type)
        .orderBy('id')
        .execute()
    ).map((e) => JSON.parse(e.payload));

  const allFinal = (ticket: number) => async () => {
    const rows = await messagesOf(ticket);
    return rows.every((m) => ['delivered', 'failed', 'expired'].includes(m.state)) && rows;
  };

  it('the simulator delivers a campaign and each receipt writes a DLR event carrying the gsmsmsid', async () => {
    const a = await h().account();
    await startWorker(
      new SimulatorTransport({ dlrDelayMs: 0, outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }] }),
    );
    const ticket = await send(a, [
      { value: '33612345678', gsmsmsid: 'order-1' },
      { value: '33612345679', gsmsmsid: 'order-2' },
    ]);
    const rows = await waitFor(allFinal(ticket), 'final states');
    expect(rows.map((m) => [m.state, m.dlr_status])).toEqual([
      ['delivered', 3],
      ['delivered', 3],
    ]);
    const dlrs = await eventsOf(a.id, 'DLR');
    expect(dlrs.map((d) => d.message_id).sort()).toEqual(['order-1', 'order-2']);
    expect(dlrs[0]).toEqual({
      date: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/),
      status: 3,
      destination: expect.stringMatching(/^3361234567[89]$/),
      message_id: expect.any(String),
      campaign_id: String(ticket),
      country_code: 'FR',
    });
  });

  it('a receipt saying the number does not exist fails the message with 5 and puts the number on the NPAI list', async () => {
    const a = await h().account();
    await startWorker(
      new SimulatorTransport({ dlrDelayMs: 0, outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }] }),
    );
    const ticket = await send(a, [{ value: '33612340000' }]);
    const [row] = await waitFor(allFinal(ticket), 'final state');
    expect(row).toMatchObject({ state: 'failed', dlr_status: 5 });
    const again = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: {
        sms: { message: { text: 'x', pushtype: 'alert' }, recipients: { gsm: [{ value: '33612340000' }] } },
      },
    });
    expect(again.body).toMatchObject({ npai: 1, sent: 0 });
    // The NPAI entry names the campaign whose receipt said so.
    const listed = await call(h().app, 'GET', '/npai', { token: a.token });
    expect(listed.body.list).toMatchObject([{ destination: '33612340000', campaign_id: String(ticket) }]);
  });

  it('through SMPP: a long UCS-2 message goes out in parts with a UDH and is delivered when every part is', async () => {
    const a = await h().account();
    const smsc = await new TestSmsc({ receipts: 'text' }).listen();
    await startWorker(new SmppTransport(smppOptions(smsc.url), quiet), smsc);
    const text = `Ünïcødé ✓ ${'ж'.repeat(120)}`;
    const ticket = await send(a, [{ value: '33612345678', gsmsmsid: 'long-1' }], text);
    const [row] = await waitFor(allFinal(ticket), 'final state');
    expect(row).toMatchObject({ state: 'delivered', dlr_status: 3 });
    expect(smsc.submits).toHaveLength(2);
    expect(smsc.submits.map((s) => [s.dataCoding, s.udh?.[4], s.udh?.[5]])).toEqual([
      [8, 2, 1],
      [8, 2, 2],
    ]);
    expect(smsc.submits.map((s) => s.source)).toEqual(['Pigeon', 'Pigeon']);
    expect((await eventsOf(a.id, 'DLR')).map((d) => d.message_id)).toEqual(['long-1']);
  });

  it('receipts as TLVs with decimal ids, and ids spelled in hex in the text where the response was decimal, both match', async () => {
    for (const receipts of ['tlv', 'text'] as const) {
      const a = await h().account();
      const smsc = await new TestSmsc({
        receipts,
        idFormat: 'dec',
        outcome: () => ({ stat: 'EXPIRED' }),
      }).listen();
      await startWorker(new SmppTransport(smppOptions(smsc.url), quiet), smsc);
      const ticket = await send(a, [{ value: '33612345678' }]);
      const [row] = await waitFor(allFinal(ticket), `${receipts} receipt`);
      expect(row).toMatchObject({ state: 'expired', dlr_status: 12 });
      await running.pop()?.worker.stop();
      await smsc.close();
    }
  });

  it('an unknown or late receipt is acknowledged and changes nothing', async () => {
    const a = await h().account();
    await startWorker(
      new SimulatorTransport({ dlrDelayMs: 0, outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }] }),
    );
    const ticket = await send(a, [{ value: '33612345678' }]);
    await waitFor(allFinal(ticket), 'final state');
    await h().deps.services.delivery.recordReceipts([
      { smscId: 'never-sent', stat: 'DELIVRD', err: null },
      { smscId: (await messagesOf(ticket))[0].smsc_id!, stat: 'UNDELIV', err: '000' },
    ]);
    expect((await messagesOf(ticket))[0]).toMatchObject({ state: 'delivered', dlr_status: 3 });
    expect(await eventsOf(a.id, 'DLR')).toHaveLength(1);
  });

  it('a receipt written in the same batch as its submit finds its part, and the same receipt again, twice in a batch, changes nothing', async () => {
    const a = await h().account();
    const ticket = await send(a, [{ value: '33612345678', gsmsmsid: 'same-batch' }]);
    const delivery = h().deps.services.delivery;
    const [message] = await delivery.claim(10);
    expect(message.campaign_id).toBe(Number(ticket));
    const receipt = { smscId: 'batch-1', stat: 'DELIVRD', err: '000' };
    await delivery.recordOutcomes([{ kind: 'submitted', message, smscIds: ['batch-1'] }], [receipt]);
    expect((await messagesOf(ticket))[0]).toMatchObject({ state: 'delivered', dlr_status: 3 });
    const orphans = await h()
      .deps.store.db.selectFrom('orphan_receipts')
      .select('id')
      .where('smsc_id', '=', 'batch-1')
      .execute();
    expect(orphans).toEqual([]);
    // The carrier sends it again, twice in one batch: nothing changes.
    await delivery.recordReceipts([receipt, receipt]);
    expect((await eventsOf(a.id, 'DLR')).map((d) => d.message_id)).toEqual(['same-batch']);
  });

  it('the SMSC throttling the first submits only delays them', async () => {
    const a = await h().account();
    const smsc = await new TestSmsc({ refuse: { status: 0x58, count: 3 } }).listen();
    await startWorker(new SmppTransport(smppOptions(smsc.url), quiet), smsc);
    const ticket = await send(a, [{ value: '33612345671' }, { value: '33612345672' }]);
    const rows = await waitFor(allFinal(ticket), 'final states');
    expect(rows.map((m) => m.state)).toEqual(['delivered', 'delivered']);
  });

  it('the SMSC dropped mid-campaign and restored: every message is submitted and none is lost', async () => {
    const a = await h().account();
    const smsc = await new TestSmsc().listen();
    await startWorker(new SmppTransport(smppOptions(smsc.url, { window: 5 }), quiet), smsc);
    const recipients = Array.from({ length: 120 }, (_, i) => ({
      value: `336${String(10000000 + i)}`,
      gsmsmsid: `m${i}`,
    }));
    const ticket = await send(a, recipients);
    await waitFor(() => smsc.submits.length >= 30, 'some submits');
    await smsc.restartAfter(async () => {});
    const rows = await waitFor(allFinal(ticket), 'every message final', 30_000);
    expect(rows.every((m) => m.state === 'delivered')).toBe(true);
    const submitted = new Set(smsc.submits.map((s) => s.destination));
    expect(submitted.size).toBe(120);
    // What was in flight when the connections dropped may go twice; nothing else does.
    expect(smsc.submits.length - 120).toBeLessThanOrEqual(2 * 5);
  });

  it('a message still queued after its validity expires with 12 instead of going out late', async () => {
    const a = await h().account();
    const ticket = await send(a, [{ value: '33612345678', gsmsmsid: 'late' }]);
    h().clock.advance(49 * 3_600_000);
    await startWorker(
      new SimulatorTransport({ dlrDelayMs: 0, outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }] }),
    );
    const [row] = await waitFor(allFinal(ticket), 'final state');
    expect(row).toMatchObject({ state: 'expired', dlr_status: 12 });
    expect((await eventsOf(a.id, 'DLR'))[0]).toMatchObject({ status: 12, message_id: 'late' });
  });

  it('a marketing message taken after the window closed waits for the next opening instead of going out', async () => {
    const a = await h().account();
    h().clock.set(Date.UTC(2027, 1, 8, 9)); // Monday 10:00 in Paris
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Soldes', pushtype: 'marketing' },
          recipients: { gsm: [{ value: '33612345670' }] },
        },
      },
    });
    const ticket = Number(r.body.ticket);
    h().clock.set(Date.UTC(2027, 1, 8, 20, 30)); // the same Monday, 21:30 in Paris: the backlog is late
    const simulator = new SimulatorTransport({
      dlrDelayMs: 0,
      outcomes: [{ stat: 'DELIVRD', err: '000', weight: 1 }],
    });
    await startWorker(simulator);
    const row = await waitFor(
      () =>
        h()
          .deps.store.db.selectFrom('messages')
          .select(['state', 'due_at', 'error', 'smsc_id'])
          .where('campaign_id', '=', ticket)
          .where('error', '=', 'waiting for the marketing sending window')
          .executeTakeFirst(),
      'the message deferred',
    );
    expect(row).toMatchObject({ state: 'queued', due_at: Date.UTC(2027, 1, 9, 7), smsc_id: null });
  });

  it('a reply becomes an MO event for the account that last wrote to the number; STOP blacklists it', async () => {
    const a = await h().account();
    const b = await h().account();
    const smsc = await new TestSmsc().listen();
    await startWorker(new SmppTransport(smppOptions(smsc.url, { binds: 1 }), quiet), smsc);
    await waitFor(allFinal(await send(b, [{ value: '33698765432', gsmsmsid: 'b-1' }])), 'b delivered');
    await waitFor(allFinal(await send(a, [{ value: '33698765432', gsmsmsid: 'a-1' }])), 'a delivered');
    smsc.sendMo('33698765432', '36180', 'Oui, merci !');
    await waitFor(async () => (await eventsOf(a.id, 'MO')).length === 1, 'MO event');
    expect((await eventsOf(a.id, 'MO'))[0]).toEqual({
      date: expect.any(String),
      message: 'Oui, merci !',
      from: '33698765432',
      account_id: String(a.id),
      last_message_id: 'a-1',
    });
    smsc.sendMo('33698765432', '36180', 'Voici une réponse en deux parties, réassemblée', 2, 7);
    await waitFor(async () => (await eventsOf(a.id, 'MO')).length === 2, 'concatenated MO');
    expect((await eventsOf(a.id, 'MO'))[1].message).toBe('Voici une réponse en deux parties, réassemblée');
    smsc.sendMo('33698765432', '36180', ' arrêt ');
    await waitFor(async () => (await eventsOf(a.id, 'STOP')).length === 1, 'STOP event');
    expect(await eventsOf(b.id, 'MO')).toEqual([]);
    const blocked = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: {
        sms: { message: { text: 'x', pushtype: 'alert' }, recipients: { gsm: [{ value: '33698765432' }] } },
      },
    });
    expect(blocked.body).toMatchObject({ blacklisted: 1, sent: 0 });
  });

  it('a reply is stored with its event in one transaction: when the event cannot be written, neither is the reply', async () => {
    const a = await h().account();
    const ticket = await send(a, [{ value: '33698700001', gsmsmsid: 'r-1' }]);
    const replyService = h().deps.services.replies;
    const db = h().deps.store.db;
    const replies = () => db.selectFrom('replies').selectAll().where('account_id', '=', a.id).execute();
    const blacklisted = () =>
      db.selectFrom('blacklist').select('number').where('account_id', '=', a.id).execute();

    // The outbox is out of reach: the STOP's event fails, and its reply and blacklist entry roll back with it.
    await db.schema.alterTable('events').renameTo('events_away').execute();
    try {
      await expect(
        replyService.recordInbound({ from: '33698700001', to: 'x', text: 'STOP' }),
      ).rejects.toThrow();
    } finally {
      await db.schema.alterTable('events_away').renameTo('events').execute();
    }
    expect(await replies()).toEqual([]);
    expect(await blacklisted()).toEqual([]);
    expect(await eventsOf(a.id, 'STOP')).toEqual([]);

    expect(await replyService.recordInbound({ from: '+33698700001', to: 'x', text: 'STOP' })).toMatchObject({
      type: 'STOP',
    });
    expect(await replies()).toEqual([
      {
        id: expect.any(Number),
        account_id: a.id,
        campaign_id: ticket,
        type: 'STOP',
        number: '33698700001',
        text: 'STOP',
        gsmsmsid: 'r-1',
        received_at: h().clock.now(),
      },
    ]);
    expect(await eventsOf(a.id, 'STOP')).toEqual([
      {
        date: expect.any(String),
        message: 'STOP',
        from: '33698700001',
        account_id: String(a.id),
        last_message_id: 'r-1',
      },
    ]);
    expect(await blacklisted()).toEqual([{ number: '33698700001' }]);
  });
});
