// query_sm: an ESME asks where a message it submitted stands, by the message_id its submit_sm_resp gave. The
// answer carries SMPP's message_state (ENROUTE until the outcome, then DELIVERED, UNDELIVERABLE, REJECTED,
// EXPIRED), the final_date once final and, for a message not delivered, its DLR status as error_code. An id
// that is not the user's own message is ESME_RQUERYFAIL, never another user's state.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { SimulatorTransport } from '../../src/delivery/simulator/simulator-transport.ts';
import type { SmppServer } from '../../src/smpp-server/smpp-server.ts';
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

  async function submit(esme: Esme, destination: string): Promise<string> {
    const resp = await esme.request('submit_sm', {
      source_addr: 'MyShop',
      destination_addr: destination,
      registered_delivery: 0,
      short_message: Buffer.from(encodeGsm7('Where is it?')),
    });
    expect(resp.command_status).toBe(0);
    return resp.message_id as string;
  }

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
});
