// Receipts that never come: a message submitted but not receipted within DLR_WAIT is closed as expired (DLR
// 12) with its DLR event, its campaign finishes, and the DLR webhook says so; a receipt that comes later
// still wins. Through the real SMPP client against a loopback SMSC that sends no receipts, on a moved clock.
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import type { Dispatcher } from '../../src/webhooks/dispatcher.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { TestSmsc, testSmppOptions } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { testDeliveryWorker, testDispatcher } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };
const hour = 3_600_000;
const dlrWaitMs = 72 * hour;

describeEachDialect(
  'receipts that never come (DLR_WAIT)',
  (h) => {
    const stops: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    });

    async function startWorker(smsc: TestSmsc): Promise<DeliveryWorker> {
      const transport = new SmppTransport(testSmppOptions(smsc.url), quiet);
      const worker = testDeliveryWorker(h(), transport, {}, quiet);
      await worker.start();
      stops.push(async () => {
        await worker.stop();
        await smsc.close();
      });
      return worker;
    }

    async function startDispatcher(): Promise<Dispatcher> {
      const dispatcher = testDispatcher(h(), quiet);
      dispatcher.start();
      stops.push(() => dispatcher.stop());
      return dispatcher;
    }

    async function dlrReceiver(account: TestAccount): Promise<WebhookReceiver> {
      const receiver = await new WebhookReceiver().listen();
      stops.push(() => receiver.close());
      const r = await call(h().app, 'POST', '/webhook', {
        token: account.token,
        json: { webhook: { type: 'DLR', url: `http://127.0.0.1:${receiver.port}/dlr` } },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return receiver;
    }

    async function send(account: TestAccount, recipients: { value: string; gsmsmsid: string }[]) {
      const r = await call(h().app, 'POST', '/send', {
        token: account.token,
        json: { sms: { message: { text: 'Your parcel is on its way' }, recipients: { gsm: recipients } } },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return Number(r.body.ticket);
    }

    const messagesOf = (ticket: number) =>
      h()
        .deps.store.db.selectFrom('messages')
        .select(['id', 'recipient', 'state', 'dlr_status', 'sent_at'])
        .where('campaign_id', '=', ticket)
        .orderBy('seq')
        .execute();

    const dlrEventsOf = async (ticket: number) =>
      (
        await h()
          .deps.store.db.selectFrom('events')
          .select('payload')
          .where('campaign_id', '=', ticket)
          .where('type', '=', 'DLR')
          .orderBy('id')
          .execute()
      ).map((e) => JSON.parse(e.payload));

    const campaignOf = async (account: TestAccount, ticket: number) =>
      (await call(h().app, 'GET', `/campaign/${ticket}`, { token: account.token })).body.campaign[0];

    it('a message not receipted within DLR_WAIT closes as expired (DLR 12), not a millisecond before; its campaign finishes and the DLR webhook says so', async () => {
      const a = await h().account();
      const receiver = await dlrReceiver(a);
      const smsc = await new TestSmsc({ receipts: 'none' }).listen();
      await startWorker(smsc);
      const ticket = await send(a, [
        { value: '33612345678', gsmsmsid: 'parcel-1' },
        { value: '33612345679', gsmsmsid: 'parcel-2' },
      ]);
      const submitted = await waitFor(async () => {
        const rows = await messagesOf(ticket);
        return rows.every((m) => m.state === 'submitted') && rows;
      }, 'both messages submitted');
      expect(await campaignOf(a, ticket)).toMatchObject({ state: 'sent', expired: 0 });
      const sentAt = Math.max(...submitted.map((m) => Number(m.sent_at)));

      // One millisecond short of the wait: nothing closes, whoever looks.
      h().clock.set(sentAt + dlrWaitMs - 1);
      expect(await h().deps.services.delivery.closeUnreceipted()).toBe(0);
      expect((await messagesOf(ticket)).map((m) => m.state)).toEqual(['submitted', 'submitted']);

      // At the wait: the worker's sweep closes both, each with its DLR event.
      h().clock.set(sentAt + dlrWaitMs);
      const closed = await waitFor(async () => {
        const rows = await messagesOf(ticket);
        return rows.every((m) => m.state === 'expired') && rows;
      }, 'the sweep to close the unreceipted messages');
      expect(closed.map((m) => m.dlr_status)).toEqual([12, 12]);
      const events = await dlrEventsOf(ticket);
      expect(events.map((e) => [e.message_id, e.status, e.destination]).sort()).toEqual([
        ['parcel-1', 12, '33612345678'],
        ['parcel-2', 12, '33612345679'],
      ]);
      expect(await campaignOf(a, ticket)).toMatchObject({
        state: 'done',
        total: 2,
        expired: 2,
        delivered: 0,
      });

      // The webhook of the account hears it.
      await startDispatcher();
      await waitFor(() => receiver.requests.length >= 2, 'the two DLR webhooks');
      expect(
        receiver.requests.map((r) => JSON.parse(r.body)).map((b) => [b.message_id, b.status, b.campaign_id]),
      ).toEqual(
        expect.arrayContaining([
          ['parcel-1', 12, String(ticket)],
          ['parcel-2', 12, String(ticket)],
        ]),
      );
    });

    it('a receipt arriving after the close wins: the message takes the real state and a second DLR event says so; a repeat of it changes nothing', async () => {
      const a = await h().account();
      const smsc = await new TestSmsc({ receipts: 'none' }).listen();
      await startWorker(smsc);
      const ticket = await send(a, [
        { value: '33612345670', gsmsmsid: 'late-1' },
        { value: '33612345671', gsmsmsid: 'never-1' },
      ]);
      await waitFor(async () => {
        const rows = await messagesOf(ticket);
        return rows.every((m) => m.state === 'submitted') && smsc.submits.length === 2 && rows;
      }, 'both messages submitted');
      h().clock.advance(dlrWaitMs + hour);
      await waitFor(async () => {
        const rows = await messagesOf(ticket);
        return rows.every((m) => m.state === 'expired') && rows;
      }, 'the sweep to close them');

      const late = smsc.submits.find((s) => s.destination === '33612345670');
      expect(late).toBeDefined();
      const { delivery } = h().deps.services;
      await delivery.recordReceipts([{ smscId: late!.messageId, stat: 'DELIVRD', err: '000' }]);
      expect((await messagesOf(ticket)).map((m) => [m.recipient, m.state, m.dlr_status])).toEqual([
        ['33612345670', 'delivered', 3],
        ['33612345671', 'expired', 12],
      ]);
      const events = await dlrEventsOf(ticket);
      // The closing events first (one transaction, in no particular order), then the late receipt's.
      expect(events.slice(0, 2).map((e) => [e.message_id, e.status])).toEqual(
        expect.arrayContaining([
          ['late-1', 12],
          ['never-1', 12],
        ]),
      );
      expect(events.slice(2).map((e) => [e.message_id, e.status])).toEqual([['late-1', 3]]);
      expect(await campaignOf(a, ticket)).toMatchObject({ state: 'done', delivered: 1, expired: 1 });

      // The same receipt again, and a second sweep: nothing more.
      await delivery.recordReceipts([{ smscId: late!.messageId, stat: 'DELIVRD', err: '000' }]);
      expect(await delivery.closeUnreceipted()).toBe(0);
      expect(await dlrEventsOf(ticket)).toHaveLength(3);
    });

    it('a long message closed for want of receipts takes its real state once the late receipts of all its parts have come', async () => {
      const a = await h().account();
      const smsc = await new TestSmsc({ receipts: 'none' }).listen();
      await startWorker(smsc);
      const r = await call(h().app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: `Long: ${'x'.repeat(200)}` },
            recipients: { gsm: [{ value: '33612345673', gsmsmsid: 'long-late' }] },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      const ticket = Number(r.body.ticket);
      await waitFor(async () => {
        const [row] = await messagesOf(ticket);
        return row.state === 'submitted' && smsc.submits.length === 2 && row;
      }, 'both parts submitted');
      h().clock.advance(dlrWaitMs);
      await waitFor(async () => (await messagesOf(ticket))[0].state === 'expired', 'the sweep to close it');

      const { delivery } = h().deps.services;
      const [first, second] = smsc.submits;
      await delivery.recordReceipts([{ smscId: first.messageId, stat: 'DELIVRD', err: '000' }]);
      expect((await messagesOf(ticket)).map((m) => [m.state, m.dlr_status])).toEqual([['expired', 12]]);
      await delivery.recordReceipts([{ smscId: second.messageId, stat: 'DELIVRD', err: '000' }]);
      expect((await messagesOf(ticket)).map((m) => [m.state, m.dlr_status])).toEqual([['delivered', 3]]);
      expect((await dlrEventsOf(ticket)).map((e) => [e.message_id, e.status])).toEqual([
        ['long-late', 12],
        ['long-late', 3],
      ]);
    });

    it('a message the carrier itself reported expired is final: a later receipt changes nothing', async () => {
      const a = await h().account();
      const smsc = await new TestSmsc({ receipts: 'text', outcome: () => ({ stat: 'EXPIRED' }) }).listen();
      await startWorker(smsc);
      const ticket = await send(a, [{ value: '33612345672', gsmsmsid: 'carrier-expired' }]);
      await waitFor(async () => {
        const [row] = await messagesOf(ticket);
        return row.state === 'expired' && row;
      }, 'the carrier receipt');
      const [submit] = smsc.submits;
      await h().deps.services.delivery.recordReceipts([
        { smscId: submit.messageId, stat: 'DELIVRD', err: '000' },
      ]);
      expect((await messagesOf(ticket)).map((m) => [m.state, m.dlr_status])).toEqual([['expired', 12]]);
      expect(await dlrEventsOf(ticket)).toHaveLength(1);
    });
  },
  { DLR_WAIT: '72h', WEBHOOK_ALLOW_PRIVATE: 'true' },
);
