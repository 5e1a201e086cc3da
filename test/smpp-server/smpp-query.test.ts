// query_sm: an ESME asks where a message it submitted stands, by the message_id its submit_sm_resp gave. The
// answer carries SMPP's message_state (ENROUTE until the outcome, then DELIVERED, UNDELIVERABLE, REJECTED,
// EXPIRED, DELETED), the final_date once final and, for a message not delivered, its DLR status as error_code.
// An id that is not the user's own message is ESME_RQUERYFAIL, never another user's state. A submit's
// schedule_delivery_time (absolute or relative) makes it due then, and cancel_sm cancels what no worker has
// taken yet, refunded, as DELETE /send does, by its id or every one from a source to a destination. A
// submit_multi's message stands as its destinations' together.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { SimulatorTransport } from '../../src/delivery/simulator/simulator-transport.ts';
import type { SmppServer } from '../../src/smpp-server/smpp-server.ts';
import { smppAbsoluteTime } from '../../src/smpp-server/smpp-time.ts';
import { encodeGsm7 } from '../../src/sms/segments.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { testDeliveryWorker, untilFinal } from '../helpers/worker.ts';
import { bindEsme, type Esme, startSmppServer } from './smpp-client.ts';

const queryFail = 0x67;

describeEachDialect('SMPP server query_sm', (h) => {
  let server: SmppServer;
  let port: number;
  let account: TestAccount;
  const open: Esme[] = [];

  beforeAll(async () => {
    ({ server, port } = await startSmppServer(h()));
    for (const [systemId, tps] of [
      ['query', 0],
      ['other', 0],
      ['poll', 2],
    ] as const) {
      const created = await h().account({ credits: 100 });
      await h().deps.services.smppUsers.createForAccount(created.id, {
        system_id: systemId,
        password: 'pw',
        tps,
      });
      if (systemId === 'query') account = created;
    }
  });
  afterEach(async () => {
    for (const esme of open.splice(0)) await esme.close();
  });
  afterAll(async () => {
    await server.close();
  });

  async function bound(mode: 'transmitter' | 'receiver' | 'transceiver', systemId = 'query'): Promise<Esme> {
    const { esme, resp } = await bindEsme(port, mode, systemId, 'pw');
    expect(resp.command_status).toBe(0);
    open.push(esme);
    return esme;
  }

  async function submit(esme: Esme, destination: string, schedule = ''): Promise<string> {
    const resp = await esme.request('submit_sm', {
      source_addr: 'MyShop',
      destination_addr: destination,
      registered_delivery: 0,
      schedule_delivery_time: schedule,
      short_message: Buffer.from(encodeGsm7('Where is it?')),
    });
    expect(resp.command_status).toBe(0);
    return resp.message_id as string;
  }

  /** SMPP's absolute time of `ms`, written as a clock `quarters` quarter hours ahead of UTC would. */
  function absolute(ms: number, quarters: number): string {
    const utc = smppAbsoluteTime(ms + quarters * 15 * 60_000);
    return `${utc.slice(0, 13)}${String(quarters).padStart(2, '0')}+`;
  }

  const dueAtOf = async (ticket: string) =>
    Number(
      (
        await h()
          .deps.store.db.selectFrom('messages')
          .select('due_at')
          .where('campaign_id', '=', Number(ticket))
          .executeTakeFirstOrThrow()
      ).due_at,
    );

  const credits = async () => (await call(h().app, 'GET', '/credits', { token: account.token })).body.credits;

  const cancel = (esme: Esme, messageId: string, source = 'MyShop') =>
    esme.request('cancel_sm', { message_id: messageId, source_addr: source, destination_addr: '' });

  const query = (esme: Esme, messageId: string, source = 'MyShop') =>
    esme.request('query_sm', { message_id: messageId, source_addr: source });

  /** Sends what is queued through a simulator whose every receipt says `stat`, until the tickets are final. */
  async function deliverAll(stat: string, err: string, tickets: string[]): Promise<void> {
    const worker = testDeliveryWorker(
      h(),
      new SimulatorTransport({ dlrDelayMs: 0, outcomes: [{ stat, err, weight: 1 }] }),
    );
    await worker.start();
    try {
      await untilFinal(h(), tickets);
    } finally {
      await worker.stop();
    }
  }

  it('answers ENROUTE until the outcome, then DELIVERED with its final_date, on a transmitter or a transceiver', async () => {
    const tx = await bound('transmitter');
    const id = await submit(tx, '33612345201');
    const before = await query(tx, id);
    expect(before.command_status).toBe(0);
    expect(before).toMatchObject({ message_id: id, final_date: '', message_state: 1, error_code: 0 });

    const startedAt = h().clock.now();
    await deliverAll('DELIVRD', '000', [id]);
    const trx = await bound('transceiver');
    for (const esme of [tx, trx]) {
      const after = await query(esme, id);
      expect(after.command_status).toBe(0);
      expect(after).toMatchObject({ message_id: id, message_state: 2, error_code: 0 });
      // Sent as YYMMDDhhmmss, tenths, quarter hours from UTC and '+' (the client reads it back as a time):
      // when the message became final.
      expect(after.final_date).toBeInstanceOf(Date);
      expect(Math.abs((after.final_date as Date).getTime() - startedAt)).toBeLessThan(60_000);
    }
  });

  it('answers UNDELIVERABLE or REJECTED with the DLR status as error_code', async () => {
    const tx = await bound('transmitter');
    const undelivered = await submit(tx, '33612345202');
    await deliverAll('UNDELIV', '034', [undelivered]);
    const rejected = await submit(tx, '33612345203');
    await deliverAll('REJECTD', '000', [rejected]);
    expect(await query(tx, undelivered)).toMatchObject({
      command_status: 0,
      message_state: 5,
      error_code: 2,
    });
    expect(await query(tx, rejected)).toMatchObject({ command_status: 0, message_state: 8, error_code: 9 });
  });

  it('answers for a submit_multi: ENROUTE while a destination is, then as its first destination not delivered, or DELIVERED', async () => {
    const tx = await bound('transmitter');
    const multi = async (destinations: string[]) => {
      const resp = await tx.request('submit_multi', {
        source_addr: 'MyShop',
        dest_address: destinations.map((destination_addr) => ({ destination_addr })),
        short_message: Buffer.from(encodeGsm7('Where are they?')),
      });
      expect(resp.command_status).toBe(0);
      return resp.message_id as string;
    };
    // The simulator does not deliver a number ending in 0000.
    const mixed = await multi(['33612345230', '33612340000', '33612345231']);
    const delivered = await multi(['33612345232', '33612345233']);
    const alone = await submit(tx, '33612350000');
    expect(await query(tx, mixed)).toMatchObject({ command_status: 0, message_state: 1, final_date: '' });
    await deliverAll('DELIVRD', '000', [mixed, delivered, alone]);
    const undelivered = await query(tx, alone);
    expect(undelivered.message_state).toBe(5);
    expect(await query(tx, mixed)).toMatchObject({
      command_status: 0,
      message_state: 5,
      error_code: undelivered.error_code,
    });
    const all = await query(tx, delivered);
    expect(all).toMatchObject({ command_status: 0, message_state: 2, error_code: 0 });
    expect(all.final_date).toBeInstanceOf(Date);
  });

  it('cancel_sm without message_id cancels every untaken message from the source to the destination, refunded; no other', async () => {
    const tx = await bound('transmitter');
    const later = absolute(h().clock.now() + 3_600_000, 0);
    const before = await credits();
    // Two for the destination from MyShop (one written +33…), one from another sender, one to another number,
    // and a submit_multi that includes the destination.
    const mine = [await submit(tx, '33612345240', later), await submit(tx, '+33612345240', later)];
    const fromOther = await tx.request('submit_sm', {
      source_addr: 'OtherShop',
      destination_addr: '33612345240',
      schedule_delivery_time: later,
      short_message: Buffer.from(encodeGsm7('Not this one')),
    });
    expect(fromOther.command_status).toBe(0);
    const elsewhere = await submit(tx, '33612345241', later);
    const multi = await tx.request('submit_multi', {
      source_addr: 'MyShop',
      dest_address: ['33612345240', '33612345242'].map((destination_addr) => ({ destination_addr })),
      schedule_delivery_time: later,
      short_message: Buffer.from(encodeGsm7('Both')),
    });
    expect(multi.command_status).toBe(0);
    // Another user's cancel finds none of them.
    const other = await bound('transmitter', 'other');
    const byOther = await other.request('cancel_sm', {
      message_id: '',
      source_addr: 'MyShop',
      destination_addr: '33612345240',
    });
    expect(byOther.command_status).toBe(0x11);
    const spent = before - (await credits());

    const all = await tx.request('cancel_sm', {
      message_id: '',
      source_addr: 'MyShop',
      destination_addr: '0033612345240',
    });
    expect(all.command_status).toBe(0);
    expect(before - (await credits())).toBe(spent - 2);
    for (const id of mine) expect((await query(tx, id)).message_state).toBe(4);
    for (const [id, source] of [
      [fromOther.message_id as string, 'OtherShop'],
      [elsewhere, 'MyShop'],
      [multi.message_id as string, 'MyShop'],
    ])
      expect((await query(tx, id, source)).message_state).toBe(1);
    // Nothing is left to cancel there.
    const again = await tx.request('cancel_sm', {
      message_id: '',
      source_addr: 'MyShop',
      destination_addr: '33612345240',
    });
    expect(again.command_status).toBe(0x11);
  });

  it('knows a long message by the id of any of its parts: query_sm and cancel_sm by an earlier part’s id', async () => {
    const tx = await bound('transmitter');
    const later = absolute(h().clock.now() + 3_600_000, 0);
    const parts = ['p'.repeat(153), 'q'.repeat(20)];
    const ids: string[] = [];
    const before = await credits();
    for (let i = 0; i < parts.length; i++) {
      const r = await tx.request('submit_sm', {
        source_addr: 'MyShop',
        destination_addr: '33612345250',
        esm_class: 0x40,
        schedule_delivery_time: later,
        short_message: Buffer.concat([
          Buffer.from([5, 0, 3, 0x61, 2, i + 1]),
          Buffer.from(encodeGsm7(parts[i])),
        ]),
      });
      expect(r.command_status).toBe(0);
      ids.push(r.message_id as string);
    }
    const [first, last] = ids;
    expect(first).toHaveLength(16);
    expect(await query(tx, first)).toMatchObject({ command_status: 0, message_id: first, message_state: 1 });
    // Another user does not find it by that id either.
    const other = await bound('transmitter', 'other');
    expect((await query(other, first)).command_status).toBe(queryFail);
    expect((await cancel(other, first)).command_status).toBe(0x11);

    expect((await cancel(tx, first)).command_status).toBe(0);
    expect(await credits()).toBe(before);
    for (const id of [first, last]) expect((await query(tx, id)).message_state).toBe(4);
  });

  it('answers ESME_RQUERYFAIL for an id not the user’s own message, and ESME_RINVBNDSTS on a receiver', async () => {
    const tx = await bound('transmitter');
    const id = await submit(tx, '33612345204');
    const other = await bound('transmitter', 'other');
    expect((await query(other, id)).command_status).toBe(queryFail);
    expect((await query(tx, id, 'SomeoneElse')).command_status).toBe(queryFail);
    expect((await query(tx, id, '')).command_status).toBe(0);
    for (const unknown of ['999999999', '0', 'abc', '', '1'.repeat(40)]) {
      expect((await query(tx, unknown)).command_status, unknown).toBe(queryFail);
    }
    // A campaign the same account sent over HTTP is not one of the user's SMPP messages.
    const sent = await call(h().app, 'POST', '/send', {
      token: account.token,
      json: { sms: { message: { text: 'Over HTTP' }, recipients: { gsm: [{ value: '33612345205' }] } } },
    });
    expect(sent.body.status, sent.body.details).toBe(1);
    expect((await query(tx, String(sent.body.ticket))).command_status).toBe(queryFail);
    const rx = await bound('receiver');
    expect((await query(rx, id)).command_status).toBe(0x04);
  });

  it('throttles queries above the user’s tps on a budget of their own: its submits still go', async () => {
    const tx = await bound('transmitter', 'poll');
    const id = await submit(tx, '33612345206');
    // The harness's clock stands still: one second's budget, 2 queries and 2 submits.
    expect((await query(tx, id)).command_status).toBe(0);
    expect((await query(tx, id)).command_status).toBe(0);
    expect((await query(tx, id)).command_status).toBe(0x58);
    await submit(tx, '33612345207');
    h().clock.advance(1000);
    expect((await query(tx, id)).command_status).toBe(0);
  });

  it('sends a submit at its schedule_delivery_time, absolute in any offset or relative; a bad one is 0x61, uncharged', async () => {
    const tx = await bound('transmitter');
    const now = h().clock.now();
    // Two hours ahead, written by a clock one hour ahead of UTC: due in two hours.
    const inTwoHours = await submit(tx, '33612345210', absolute(now + 7_200_000, 4));
    expect(await dueAtOf(inTwoHours)).toBe(now + 7_200_000 - ((now + 7_200_000) % 100));
    expect(await query(tx, inTwoHours)).toMatchObject({ message_state: 1, final_date: '' });
    // One day, one hour and a minute from now.
    const relative = await submit(tx, '33612345211', '000001010100000R');
    expect(await dueAtOf(relative)).toBe(now + 86_400_000 + 3_600_000 + 60_000);
    // A time already past is now.
    const past = await submit(tx, '33612345212', absolute(now - 60_000, 0));
    expect(await dueAtOf(past)).toBe(now);

    const before = await credits();
    for (const bad of [
      'garbage',
      '261332000000000+',
      '260101250000000+',
      '000000000100010R',
      '260101000000049+',
    ]) {
      const resp = await tx.request('submit_sm', {
        source_addr: 'MyShop',
        destination_addr: '33612345213',
        schedule_delivery_time: bad,
        short_message: Buffer.from(encodeGsm7('Never')),
      });
      expect(resp.command_status, bad).toBe(0x61);
    }
    expect(await credits()).toBe(before);
  });

  it('cancel_sm cancels a scheduled message, refunded, then DELETED; a message already taken, or not the user’s, cannot be', async () => {
    const tx = await bound('transmitter');
    const before = await credits();
    const scheduled = await submit(tx, '33612345220', absolute(h().clock.now() + 3_600_000, 0));
    expect(await credits()).toBeLessThan(before);
    const other = await bound('transmitter', 'other');
    expect((await cancel(other, scheduled)).command_status).toBe(0x11);
    expect((await cancel(tx, scheduled, 'SomeoneElse')).command_status).toBe(0x11);

    const cancelled = await cancel(tx, scheduled);
    expect(cancelled.command).toBe('cancel_sm_resp');
    expect(cancelled.command_status).toBe(0);
    expect(await credits()).toBe(before);
    const after = await query(tx, scheduled);
    expect(after).toMatchObject({ command_status: 0, message_state: 4, error_code: 0 });
    expect(after.final_date).toBeInstanceOf(Date);
    expect((await cancel(tx, scheduled)).command_status).toBe(0x11);

    const sent = await submit(tx, '33612345221');
    await deliverAll('DELIVRD', '000', [sent]);
    expect((await cancel(tx, sent)).command_status).toBe(0x11);
    expect((await query(tx, sent)).message_state).toBe(2);
    for (const unknown of ['999999999', '', 'abc'])
      expect((await cancel(tx, unknown)).command_status).toBe(0x11);
    const rx = await bound('receiver');
    expect((await cancel(rx, sent)).command_status).toBe(0x04);

    // A scheduled submit_multi is cancelled whole: every destination, every credit back.
    const beforeMulti = await credits();
    const multi = await tx.request('submit_multi', {
      source_addr: 'MyShop',
      dest_address: ['33612345222', '33612345223'].map((destination_addr) => ({ destination_addr })),
      schedule_delivery_time: absolute(h().clock.now() + 3_600_000, 0),
      short_message: Buffer.from(encodeGsm7('Later, both')),
    });
    expect(multi.command_status).toBe(0);
    expect(await credits()).toBe(beforeMulti - 2);
    expect((await cancel(tx, multi.message_id as string)).command_status).toBe(0);
    expect(await credits()).toBe(beforeMulti);
    expect((await query(tx, multi.message_id as string)).message_state).toBe(4);
  });
});
