// Receipts and replies of what an SMPP user sent go back to that user's receiver or transceiver binds as
// deliver_sm: the Appendix B text, esm_class 0x04, receipted_message_id (the submit_sm_resp's id) and
// message_state; kept in the outbox while no such bind is up, and sent when one binds.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SmppServer } from '../../src/smpp-server/smpp-server.ts';
import { encodeGsm7 } from '../../src/sms/segments.ts';
import { describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';
import { bindEsme, type Esme, startSmppServer } from './smpp-client.ts';

const gsm = (text: string) => Buffer.from(encodeGsm7(text));

/** A submit_sm of `text` from MyShop to `destination`, with receipts asked for unless `fields` say otherwise. */
const submitText = (esme: Esme, destination: string, text: string, fields: Record<string, unknown> = {}) =>
  esme.request('submit_sm', {
    source_addr: 'MyShop',
    destination_addr: destination,
    registered_delivery: 1,
    short_message: gsm(text),
    ...fields,
  });

describeEachDialect('SMPP server receipts', (h) => {
  let server: SmppServer;
  let port: number;
  let account: TestAccount;
  let worker: ReturnType<typeof testDeliveryWorker>;
  const open: Esme[] = [];

  beforeAll(async () => {
    ({ server, port } = await startSmppServer(h()));
    account = await h().account({ credits: 100 });
    await h().deps.services.smppUsers.createForAccount(account.id, {
      system_id: 'dlr',
      password: 'pw',
      tps: 0,
    });
    worker = testDeliveryWorker(h(), deliveringSimulator(0));
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    for (const esme of open) await esme.close();
    await server.close();
  });

  const waiting = async () =>
    (await h().deps.services.smppMessages.pending([1, 2, 3, 4, 5, 6, 7, 8, 9], 100)).length;

  it('keeps the receipt of a transmitter-only user until a receiver binds, then sends it with its TLVs', async () => {
    const { esme: tx } = await bindEsme(port, 'transmitter', 'dlr', 'pw');
    open.push(tx);
    const resp = await submitText(tx, '33612345101', 'Your code is 1234, valid 5 minutes');
    expect(resp.command_status).toBe(0);
    const id = resp.message_id as string;
    await waitFor(async () => (await waiting()) === 1, 'the receipt kept in the outbox');
    expect(tx.delivered).toEqual([]);

    const { esme: rx, resp: bound } = await bindEsme(port, 'receiver', 'dlr', 'pw');
    open.push(rx);
    expect(bound.command_status).toBe(0);
    await waitFor(() => rx.delivered.length === 1, 'the receipt on the receiver');
    const receipt = rx.delivered[0];
    expect(receipt.esm_class).toBe(0x04);
    expect(receipt.source_addr).toBe('33612345101');
    expect(receipt.destination_addr).toBe('MyShop');
    expect(receipt.receipted_message_id).toBe(id);
    const text = (receipt.short_message as { message: string }).message;
    expect(receipt.message_state, text).toBe(2);
    expect(text).toMatch(
      new RegExp(
        `^id:${id} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} stat:DELIVRD err:003 text:Your code is 1234, v$`,
      ),
    );
    // Acknowledged: deleted from the outbox, never sent again.
    await waitFor(async () => (await waiting()) === 0, 'the outbox emptied');
    for (const esme of open.splice(0)) await esme.close();
  });

  it('sends receipts to a transceiver at once, and none when registered_delivery did not ask', async () => {
    const { esme: trx } = await bindEsme(port, 'transceiver', 'dlr', 'pw');
    open.push(trx);
    const asked = await submitText(trx, '33612345102', 'one', { registered_delivery: 0x11 });
    const unasked = await submitText(trx, '33612345103', 'two', { registered_delivery: 0 });
    expect(unasked.command_status).toBe(0);
    await waitFor(
      () => trx.delivered.some((d) => d.receipted_message_id === asked.message_id),
      'the receipt on the transceiver',
    );
    // The other message's receipt was written (delivered), and nothing for it is queued.
    await waitFor(async () => (await waiting()) === 0, 'nothing left waiting');
    expect(trx.delivered.some((d) => d.receipted_message_id === unasked.message_id)).toBe(false);
    for (const esme of open.splice(0)) await esme.close();
  });

  it('sends the receipt a data_sm asked for, under the id its data_sm_resp gave', async () => {
    const { esme: trx } = await bindEsme(port, 'transceiver', 'dlr', 'pw');
    open.push(trx);
    const resp = await trx.request('data_sm', {
      source_addr: 'MyShop',
      destination_addr: '33612345107',
      registered_delivery: 1,
      data_coding: 0,
      message_payload: gsm('Sent as data_sm'),
    });
    expect(resp.command_status).toBe(0);
    await waitFor(
      () => trx.delivered.some((d) => d.receipted_message_id === resp.message_id),
      'the data_sm’s receipt on the transceiver',
    );
    const receipt = trx.delivered.find((d) => d.receipted_message_id === resp.message_id)!;
    expect(receipt.source_addr).toBe('33612345107');
    expect((receipt.short_message as { message: string }).message).toMatch(
      new RegExp(`^id:${resp.message_id} sub:001 dlvrd:001 .* stat:DELIVRD err:003 text:Sent as data_sm$`),
    );
    for (const esme of open.splice(0)) await esme.close();
  });

  it('sends a receipt for each destination of a submit_multi, each under the one id its answer gave', async () => {
    const { esme: trx } = await bindEsme(port, 'transceiver', 'dlr', 'pw');
    open.push(trx);
    const to = ['33612345108', '33612345109'];
    const resp = await trx.request('submit_multi', {
      source_addr: 'MyShop',
      dest_address: to.map((destination_addr) => ({ dest_addr_ton: 1, dest_addr_npi: 1, destination_addr })),
      registered_delivery: 1,
      data_coding: 0,
      short_message: gsm('To both of you'),
    });
    expect(resp.command_status).toBe(0);
    const receipts = () => trx.delivered.filter((d) => d.receipted_message_id === resp.message_id);
    await waitFor(() => receipts().length === 2, 'a receipt per destination');
    expect(
      receipts()
        .map((d) => d.source_addr)
        .sort(),
    ).toEqual(to);
    for (const receipt of receipts()) {
      expect((receipt.short_message as { message: string }).message).toMatch(
        new RegExp(`^id:${resp.message_id} sub:001 dlvrd:001 .* stat:DELIVRD err:003 text:To both of you$`),
      );
    }
    for (const esme of open.splice(0)) await esme.close();
  });

  it('sends a receipt for each part id of a long message, all with the message’s outcome', async () => {
    const { esme: trx } = await bindEsme(port, 'transceiver', 'dlr', 'pw');
    open.push(trx);
    const parts = ['a'.repeat(153), 'b'.repeat(40)];
    const ids: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      const r = await trx.request('submit_sm', {
        source_addr: 'MyShop',
        destination_addr: '33612345105',
        esm_class: 0x40,
        registered_delivery: 1,
        short_message: Buffer.concat([Buffer.from([5, 0, 3, 0x99, 2, i + 1]), gsm(parts[i])]),
      });
      expect(r.command_status).toBe(0);
      ids.push(r.message_id as string);
    }
    // Decimal ids (Kannel's msg-id-type 0x00), distinct from the message's.
    expect(ids[0]).toMatch(/^\d{16}$/);
    expect(ids[0]).not.toBe(ids[1]);
    await waitFor(
      () => ids.every((id) => trx.delivered.some((d) => d.receipted_message_id === id)),
      'a receipt for each part id',
    );
    for (const id of ids) {
      const receipt = trx.delivered.find((d) => d.receipted_message_id === id)!;
      expect(receipt.message_state).toBe(2);
      expect((receipt.short_message as { message: string }).message).toMatch(
        new RegExp(`^id:${id} .* stat:DELIVRD `),
      );
    }
    for (const esme of open.splice(0)) await esme.close();
  });

  it('forgets a waiting receipt when its number is erased', async () => {
    const { esme: tx } = await bindEsme(port, 'transmitter', 'dlr', 'pw');
    open.push(tx);
    const r = await submitText(tx, '33612345106', 'to be erased');
    expect(r.command_status).toBe(0);
    await waitFor(async () => (await waiting()) === 1, 'the receipt kept in the outbox');
    const report = await h().deps.services.erase.eraseForOperator('33612345106');
    expect(report.removed.smpp_outbox).toBe(1);
    expect(await waiting()).toBe(0);
    for (const esme of open.splice(0)) await esme.close();
  });

  it('sends a reply to a message of the user as a deliver_sm to its bind', async () => {
    const { esme: trx } = await bindEsme(port, 'transceiver', 'dlr', 'pw');
    open.push(trx);
    const r = await submitText(trx, '33612345104', 'Reply YES or NO', { source_addr: '33700000001' });
    expect(r.command_status).toBe(0);
    await waitFor(async () => {
      const rows = await h()
        .deps.store.db.selectFrom('messages')
        .select('state')
        .where('campaign_id', '=', Number(r.message_id))
        .execute();
      return rows[0]?.state === 'delivered';
    }, 'the message delivered');
    await h().deps.services.replies.recordInbound({
      from: '33612345104',
      to: '33700000001',
      text: 'YES please',
    });
    await waitFor(
      () =>
        trx.delivered.some(
          (d) => d.esm_class === 0 && (d.short_message as { message: string }).message === 'YES please',
        ),
      'the reply on the bind',
    );
    const mo = trx.delivered.find((d) => d.esm_class === 0)!;
    expect(mo.source_addr).toBe('33612345104');
    expect(mo.destination_addr).toBe('33700000001');
  });
});
