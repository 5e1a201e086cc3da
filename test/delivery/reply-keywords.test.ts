// Reply keywords (issue 13): STOP in its punctuation, case and accent variants, START taking a number off the
// blacklist, HELP answered with HELP_TEXT at most once per interval, and a reply going to the account that
// last wrote to the number through the connector it came in on.
import { afterEach, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import { pigeon } from '../helpers/cli.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { TestSmsc, testSmppOptions } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

const helpText = 'MyShop: order news by SMS. Reply STOP to opt out, help at 0800 123 456';
const quiet = { info() {}, warn() {}, error() {} };

/** What a suite needs of its harness to send, read events and lists, and run a worker on a loopback SMSC. */
function tools(h: () => Harness) {
  const running: { worker: DeliveryWorker; smsc: TestSmsc }[] = [];
  const db = () => h().deps.store.db;

  async function send(account: TestAccount, numbers: string[], sender = 'MyShop') {
    const r = await call(h().app, 'POST', '/send', {
      token: account.token,
      json: {
        sms: {
          message: { text: 'Your order shipped', pushtype: 'alert', sender },
          recipients: { gsm: numbers.map((value, i) => ({ value, gsmsmsid: `${account.id}-${i}` })) },
        },
      },
    });
    expect(r.body.status, r.body.details).toBe(1);
    return Number(r.body.ticket);
  }

  async function startSmsc() {
    const smsc = await new TestSmsc().listen();
    const worker = testDeliveryWorker(h(), new SmppTransport(testSmppOptions(smsc.url), quiet));
    await worker.start();
    running.push({ worker, smsc });
    return smsc;
  }

  const delivered = (ticket: number) => async () => {
    const rows = await db()
      .selectFrom('messages')
      .select('state')
      .where('campaign_id', '=', ticket)
      .execute();
    return rows.length > 0 && rows.every((m) => m.state === 'delivered');
  };

  const eventsOf = async (accountId: number, type: string) =>
    (
      await db()
        .selectFrom('events')
        .select('payload')
        .where('account_id', '=', accountId)
        .where('type', '=', type)
        .orderBy('id')
        .execute()
    ).map((e) => JSON.parse(e.payload) as { message: string; from: string; account_id: string });

  const blacklist = async (accountId: number) =>
    (
      await db()
        .selectFrom('blacklist')
        .select('number')
        .where('account_id', '=', accountId)
        .orderBy('number')
        .execute()
    ).map((r) => r.number);

  const messagesTo = (accountId: number, number: string) =>
    db()
      .selectFrom('messages')
      .select(['text', 'campaign_id'])
      .where('account_id', '=', accountId)
      .where('recipient', '=', number)
      .orderBy('id')
      .execute();

  async function stopAll() {
    for (const r of running.splice(0)) {
      await r.worker.stop();
      await r.smsc.close();
    }
  }

  return { db, send, startSmsc, delivered, eventsOf, blacklist, messagesTo, stopAll };
}

describeEachDialect(
  'reply keywords',
  (h) => {
    const t = tools(h);
    afterEach(() => t.stopAll());

    it('"Stop.", "stop !" and "ARRÊT" from the handset blacklist the number; "please stop sending" is only an MO', async () => {
      const a = await h().account();
      const smsc = await t.startSmsc();
      const numbers = ['33611000001', '33611000002', '33611000003', '33611000004'];
      await waitFor(t.delivered(await t.send(a, numbers)), 'the campaign delivered');
      smsc.sendMo(numbers[0], '36180', 'Stop.');
      smsc.sendMo(numbers[1], '36180', 'stop !');
      smsc.sendMo(numbers[2], '36180', 'ARRÊT');
      smsc.sendMo(numbers[3], '36180', 'please stop sending');
      await waitFor(async () => (await t.eventsOf(a.id, 'STOP')).length === 3, 'three STOP events');
      await waitFor(async () => (await t.eventsOf(a.id, 'MO')).length === 1, 'one MO event');
      expect((await t.eventsOf(a.id, 'STOP')).map((e) => [e.from, e.message]).sort()).toEqual([
        [numbers[0], 'Stop.'],
        [numbers[1], 'stop !'],
        [numbers[2], 'ARRÊT'],
      ]);
      expect((await t.eventsOf(a.id, 'MO'))[0]).toMatchObject({
        from: numbers[3],
        message: 'please stop sending',
      });
      expect(await t.blacklist(a.id)).toEqual(numbers.slice(0, 3));
    });

    it('START takes the number off the blacklist of the account it replied to, only that one, and writes an MO event', async () => {
      const a = await h().account();
      const b = await h().account();
      const number = '33611000010';
      // B blacklisted the number on its own: A's subscriber coming back does not concern B.
      const listed = await call(h().app, 'POST', '/blacklist', {
        token: b.token,
        json: { blacklist: { contacts: { gsm: [{ value: number }] } } },
      });
      expect(listed.body.status, listed.body.details).toBe(1);
      const smsc = await t.startSmsc();
      await waitFor(t.delivered(await t.send(a, [number])), 'the campaign delivered');
      smsc.sendMo(number, '36180', 'STOP');
      await waitFor(async () => (await t.blacklist(a.id)).length === 1, 'blacklisted by STOP');

      smsc.sendMo(number, '36180', 'Start!');
      await waitFor(async () => (await t.eventsOf(a.id, 'MO')).length === 1, 'the MO event of START');
      expect((await t.eventsOf(a.id, 'MO'))[0]).toMatchObject({
        from: number,
        message: 'Start!',
        account_id: String(a.id),
      });
      expect(await t.blacklist(a.id)).toEqual([]);
      expect(await t.blacklist(b.id)).toEqual([number]);
      const replies = await t
        .db()
        .selectFrom('replies')
        .select(['type', 'text'])
        .where('account_id', '=', a.id)
        .orderBy('id')
        .execute();
      expect(replies).toEqual([
        { type: 'STOP', text: 'STOP' },
        { type: 'MO', text: 'Start!' },
      ]);
      // Sends reach the number again.
      const again = await call(h().app, 'POST', '/send/simulate', {
        token: a.token,
        json: {
          sms: { message: { text: 'x', pushtype: 'alert' }, recipients: { gsm: [{ value: number }] } },
        },
      });
      expect(again.body).toMatchObject({ status: 1, sent: 1, blacklisted: 0 });
    });

    it('a START whose MO event cannot be written leaves the number on the blacklist: one transaction', async () => {
      const a = await h().account();
      const number = '33611000011';
      await t.send(a, [number]);
      const replies = h().deps.services.replies;
      expect(await replies.recordInbound({ from: number, to: '36180', text: 'stop' })).toMatchObject({
        type: 'STOP',
      });
      const db = t.db();
      await db.schema.alterTable('events').renameTo('events_away').execute();
      try {
        await expect(replies.recordInbound({ from: number, to: '36180', text: 'START' })).rejects.toThrow();
      } finally {
        await db.schema.alterTable('events_away').renameTo('events').execute();
      }
      expect(await t.blacklist(a.id)).toEqual([number]);
      expect(await replies.recordInbound({ from: number, to: '36180', text: 'démarrer' })).toMatchObject({
        type: 'MO',
        keyword: 'START',
      });
      expect(await t.blacklist(a.id)).toEqual([]);
    });

    it('HELP is answered through the SMSC with HELP_TEXT from the number replied to, once: a second HELP within the interval gets no answer', async () => {
      const a = await h().account();
      const number = '33611000020';
      const smsc = await t.startSmsc();
      await waitFor(t.delivered(await t.send(a, [number])), 'the campaign delivered');
      smsc.sendMo(number, '36180', 'Aide ?');
      const answer = await waitFor(
        () => smsc.submits.find((s) => s.destination === number && s.source === '36180'),
        'the HELP answer submitted',
      );
      expect(answer.payload.toString('latin1')).toBe(helpText);
      smsc.sendMo(number, '36180', 'help');
      await waitFor(async () => (await t.eventsOf(a.id, 'MO')).length === 2, 'both HELPs recorded as MO');
      expect((await t.eventsOf(a.id, 'MO')).map((e) => e.message)).toEqual(['Aide ?', 'help']);
      // The answer is queued in the reply's transaction: once its event exists, so would a second answer.
      expect((await t.messagesTo(a.id, number)).map((m) => m.text)).toEqual(['Your order shipped', helpText]);
      expect(smsc.submits.filter((s) => s.destination === number)).toHaveLength(2);
      // The answer is free: the account paid for its campaign only.
      const credits = await call(h().app, 'GET', '/credits', { token: a.token });
      expect(Number(credits.body.credits)).toBe(999);
    });

    it('HELP is answered again once the interval has passed, per number and per account, and not to a number nobody wrote to', async () => {
      const a = await h().account();
      const b = await h().account();
      const [n1, n2] = ['33611000030', '33611000031'];
      await t.send(b, [n1]);
      await t.send(a, [n1, n2]);
      const replies = h().deps.services.replies;
      const help = (from: string, to = '36180') => replies.recordInbound({ from, to, text: 'HELP' });
      expect(await help(n1)).toMatchObject({ type: 'MO', keyword: 'HELP', answered: true, accountId: a.id });
      expect(await help(n2)).toMatchObject({ answered: true });
      h().clock.advance(10 * 60_000 - 1);
      expect(await help(n1)).toMatchObject({ answered: false });
      // B writes last: the next HELP is B's, and B has not answered this number yet.
      await t.send(b, [n1]);
      expect(await help(n1, '+33757000001')).toMatchObject({ answered: true, accountId: b.id });
      h().clock.advance(1);
      await t.send(a, [n1]);
      expect(await help(n1)).toMatchObject({ answered: true, accountId: a.id });
      const answers = async (accountId: number, number: string) =>
        (await t.messagesTo(accountId, number)).filter((m) => m.text === helpText).length;
      expect(await answers(a.id, n1)).toBe(2);
      expect(await answers(a.id, n2)).toBe(1);
      expect(await answers(b.id, n1)).toBe(1);
      // The answer comes from the number replied to, when it is a sender ID.
      const senders = await t
        .db()
        .selectFrom('campaigns')
        .select('sender')
        .where('account_id', '=', b.id)
        .where('text', '=', helpText)
        .execute();
      expect(senders).toEqual([{ sender: '33757000001' }]);
      expect(await help('33611000039')).toBeUndefined();
    });

    it('a reply via connector X goes to the account that last wrote to the number through X, even when another wrote later through Y', async () => {
      const a = await h().account();
      const b = await h().account();
      const number = '33611000040';
      const ticketA = await t.send(a, [number]);
      const ticketB = await t.send(b, [number]);
      // What the router records with each submit (migration 021): the connector that carried it.
      const carriedBy = (ticket: number, connector: string) =>
        t.db().updateTable('messages').set({ connector }).where('campaign_id', '=', ticket).execute();
      await carriedBy(ticketA, 'carrier-x');
      await carriedBy(ticketB, 'carrier-y');
      const replies = h().deps.services.replies;
      const reply = (text: string, connector?: string) =>
        replies.recordInbound({ from: number, to: '36180', text, connector });

      expect(await reply('via x', 'carrier-x')).toMatchObject({ accountId: a.id });
      expect(await reply('via y', 'carrier-y')).toMatchObject({ accountId: b.id });
      // No message went through z, and a transport that names no connector: the last writer, as before.
      expect(await reply('via z', 'carrier-z')).toMatchObject({ accountId: b.id });
      expect(await reply('no connector')).toMatchObject({ accountId: b.id });
      // A STOP through X blacklists the number for A only.
      expect(await reply('Stop !', 'carrier-x')).toMatchObject({ type: 'STOP', accountId: a.id });
      expect(await t.blacklist(a.id)).toEqual([number]);
      expect(await t.blacklist(b.id)).toEqual([]);
      expect((await t.eventsOf(a.id, 'MO')).map((e) => e.message)).toEqual(['via x']);
      expect((await t.eventsOf(b.id, 'MO')).map((e) => e.message)).toEqual([
        'via y',
        'via z',
        'no connector',
      ]);
    });

    it('a reply in parts keeps its connector: assembled at once or by the sweep, it goes to the account of that connector', async () => {
      const a = await h().account();
      const b = await h().account();
      const number = '33611000050';
      await t.send(a, [number]);
      await t.send(b, [number]);
      await t
        .db()
        .updateTable('messages')
        .set({ connector: 'carrier-x' })
        .where('account_id', '=', a.id)
        .execute();
      const replies = h().deps.services.replies;
      const part = (seq: number, text: string, ref: number) =>
        replies.recordInbound({
          from: number,
          to: '36180',
          text,
          part: { ref, total: 2, seq },
          connector: 'carrier-x',
        });
      expect(await part(1, 'Bonjour, ', 7)).toBeUndefined();
      expect(await part(2, 'deux parties', 7)).toMatchObject({
        accountId: a.id,
        text: 'Bonjour, deux parties',
      });

      // Parts whose transactions could not see each other: the sweep completes them, with their connector.
      await t
        .db()
        .insertInto('mo_fragments')
        .values(
          [1, 2].map((seq) => ({
            sender: number,
            recipient: '36180',
            ref: 8,
            total: 2,
            seq,
            text: seq === 1 ? 'par le ' : 'balayage',
            received_at: h().clock.now(),
            connector: 'carrier-x',
          })),
        )
        .execute();
      expect(await replies.assembleWaitingReplies()).toBe(1);
      expect((await t.eventsOf(a.id, 'MO')).map((e) => e.message)).toEqual([
        'Bonjour, deux parties',
        'par le balayage',
      ]);
      expect(await t.eventsOf(b.id, 'MO')).toEqual([]);
    });

    it('pigeon simulate mo --connector routes the reply through that connector and says START was applied', async () => {
      const a = await h().account();
      const b = await h().account();
      const number = '33611000060';
      await t.send(a, [number]);
      await t.send(b, [number]);
      await t
        .db()
        .updateTable('messages')
        .set({ connector: 'carrier-x' })
        .where('account_id', '=', a.id)
        .execute();
      const env = { ...process.env, DATABASE_URL: h().databaseUrl, LOG_LEVEL: 'warn' };
      const out = await pigeon(
        ['simulate', 'mo', '--from', number, '--text', 'Start.', '--connector', 'carrier-x'],
        env,
      );
      expect(JSON.parse(out)).toEqual({
        type: 'MO',
        account_id: String(a.id),
        from: number,
        text: 'Start.',
        keyword: 'START',
      });
    }, 60_000);
  },
  { HELP_TEXT: helpText },
);

describeEachDialect('reply keywords without HELP_TEXT', (h) => {
  const t = tools(h);

  it('a HELP is recorded as an MO and answered by nothing when HELP_TEXT is unset', async () => {
    const a = await h().account();
    const number = '33611000070';
    await t.send(a, [number]);
    const recorded = await h().deps.services.replies.recordInbound({
      from: number,
      to: '36180',
      text: 'help',
    });
    expect(recorded).toMatchObject({ type: 'MO', keyword: 'HELP', answered: false });
    expect((await t.eventsOf(a.id, 'MO')).map((e) => e.message)).toEqual(['help']);
    expect((await t.messagesTo(a.id, number)).map((m) => m.text)).toEqual(['Your order shipped']);
  });
});
