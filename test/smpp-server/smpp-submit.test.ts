// submit_sm through Pigeon's SMPP server is a send of the SMPP user's account through the same path as
// POST /send: charged per part, filtered (blacklist), refused without credits, visible in GET /messages; text
// in GSM 03.38, Latin-1 or UCS-2; long messages as UDH parts (8- and 16-bit references), SAR TLVs or
// message_payload, joined before the send; data_sm as a submit_sm; submit_multi as one send to its destinations,
// those kept out answered one by one; throttled above the user's tps with ESME_RTHROTTLED.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SmppServer } from '../../src/smpp-server/smpp-server.ts';
import { encodeGsm7, encodeUcs2 } from '../../src/sms/segments.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { bindEsme, connectEsme, type Esme, startSmppServer } from './smpp-client.ts';

const gsm = (text: string) => Buffer.from(encodeGsm7(text));
const ucs2 = (text: string) => Buffer.from(encodeUcs2(text));

describeEachDialect('SMPP server submit_sm', (h) => {
  let server: SmppServer;
  let port: number;
  let account: TestAccount;
  let esme: Esme;
  let n = 0;
  /** A French mobile number not used before in this file. */
  const number = () => `3361234${String(5000 + n++).padStart(4, '0')}`;
  const credits = async () => (await call(h().app, 'GET', '/credits', { token: account.token })).body.credits;

  beforeAll(async () => {
    ({ server, port } = await startSmppServer(h()));
    account = await h().account({ credits: 100 });
    await h().deps.services.smppUsers.createForAccount(account.id, {
      system_id: 'sender',
      password: 'pw',
      tps: 0,
    });
    ({ esme } = await bindEsme(port, 'transceiver', 'sender', 'pw'));
  });
  afterAll(async () => {
    await esme.close();
    await server.close();
  });

  const submit = (fields: Record<string, unknown>) =>
    esme.request('submit_sm', { source_addr: 'MyShop', data_coding: 0, ...fields });
  const data = (on: Esme, fields: Record<string, unknown>) =>
    on.request('data_sm', { source_addr: 'MyShop', data_coding: 0, ...fields });
  /** A number not used before, put on the account's blacklist. */
  const blacklisted = async () => {
    const listed = number();
    await call(h().app, 'POST', '/blacklist', {
      token: account.token,
      json: { blacklist: { contacts: { gsm: [{ value: listed }] } } },
    });
    return listed;
  };

  it('sends one message of the account, charged one credit, and GET /messages shows it under the id answered', async () => {
    const before = await credits();
    const to = number();
    const resp = await submit({ destination_addr: to, short_message: gsm('Hello {from} SMPP €') });
    expect(resp.command_status).toBe(0);
    expect(resp.message_id).toMatch(/^\d+$/);
    expect(await credits()).toBe(before - 1);
    const messages = await call(h().app, 'GET', '/messages', { token: account.token });
    const mine = messages.body.messages.find((m: { destination: string }) => m.destination === to);
    expect(mine).toMatchObject({
      campaign_id: resp.message_id,
      text: 'Hello {from} SMPP €',
      sender: 'MyShop',
    });
    // The audit log names the SMPP user and its bind's address.
    const audit = await call(h().app, 'GET', '/audit?action=campaign.send&actor=smpp', {
      token: account.token,
    });
    const entry = audit.body.entries.find((e: { object: { id: string } }) => e.object.id === resp.message_id);
    expect(entry).toMatchObject({
      actor: { kind: 'smpp', label: 'sender' },
      action: 'campaign.send',
      ip: '127.0.0.1',
    });
  });

  it('refuses a blacklisted destination (0x400) and an invalid one (0x0B), charging nothing', async () => {
    const listed = await blacklisted();
    const before = await credits();
    expect((await submit({ destination_addr: listed, short_message: gsm('hi') })).command_status).toBe(0x400);
    expect((await submit({ destination_addr: '12', short_message: gsm('hi') })).command_status).toBe(0x0b);
    expect(await credits()).toBe(before);
  });

  it('joins a long message sent as UDH parts (8- and 16-bit references), SAR TLVs or message_payload, charged per part', async () => {
    const text = `${'a'.repeat(153)}${'b'.repeat(153)}${'c'.repeat(10)}`;
    const parts = [text.slice(0, 153), text.slice(153, 306), text.slice(306)];
    /** Submits the parts in the order given, each accepted; the id of the last answer. */
    const inParts = async (to: string, order: number[], fields: (i: number) => Record<string, unknown>) => {
      let id = '';
      for (const i of order) {
        const r = await submit({ destination_addr: to, ...fields(i) });
        expect(r.command_status).toBe(0);
        id = r.message_id as string;
      }
      return id;
    };
    const withUdh = (udh: number[], i: number) => ({
      esm_class: 0x40,
      short_message: Buffer.concat([Buffer.from([...udh, i + 1]), gsm(parts[i])]),
    });
    const ways: Record<string, (to: string) => Promise<string>> = {
      udh8: (to) => inParts(to, [0, 1, 2], (i) => withUdh([5, 0, 3, 0x42, 3], i)),
      // Out of order: the message is complete when its last missing part comes.
      udh16: (to) => inParts(to, [2, 0, 1], (i) => withUdh([6, 8, 4, 0x12, 0x34, 3], i)),
      sar: (to) =>
        inParts(to, [0, 1, 2], (i) => ({
          short_message: gsm(parts[i]),
          sar_msg_ref_num: 777,
          sar_total_segments: 3,
          sar_segment_seqnum: i + 1,
        })),
      payload: (to) => inParts(to, [0], () => ({ message_payload: gsm(text) })),
    };
    for (const [way, send] of Object.entries(ways)) {
      const before = await credits();
      const to = number();
      const id = await send(to);
      expect(await credits(), way).toBe(before - 3);
      const messages = await call(h().app, 'GET', '/messages', { token: account.token });
      const mine = messages.body.messages.find((m: { destination: string }) => m.destination === to);
      expect(mine, way).toMatchObject({ campaign_id: id, text, cost: 3 });
    }
  });

  it('takes data_sm as a submit_sm: the text in message_payload (long, in SAR parts, or UCS-2), answered data_sm_resp with the campaign id, charged per part', async () => {
    const before = await credits();
    const to = number();
    const one = await data(esme, { destination_addr: to, message_payload: gsm('Hello via data_sm') });
    expect(one.command).toBe('data_sm_resp');
    expect(one.command_status).toBe(0);
    expect(await credits()).toBe(before - 1);

    const text = `${'d'.repeat(153)}${'e'.repeat(20)}`;
    const long = number();
    const whole = await data(esme, { destination_addr: long, message_payload: gsm(text) });
    expect(whole.command_status).toBe(0);
    const sar = number();
    const parts = [text.slice(0, 153), text.slice(153)];
    const answers = [];
    for (let i = 0; i < parts.length; i++) {
      answers.push(
        await data(esme, {
          destination_addr: sar,
          message_payload: gsm(parts[i]),
          sar_msg_ref_num: 4242,
          sar_total_segments: 2,
          sar_segment_seqnum: i + 1,
        }),
      );
    }
    expect(answers.map((a) => a.command_status)).toEqual([0, 0]);
    const arabic = 'مرحبا data_sm';
    const unicode = number();
    expect(
      (await data(esme, { destination_addr: unicode, data_coding: 8, message_payload: ucs2(arabic) }))
        .command_status,
    ).toBe(0);
    expect(await credits()).toBe(before - 1 - 2 - 2 - 1);

    const messages = (await call(h().app, 'GET', '/messages', { token: account.token })).body.messages;
    const of = (destination: string) =>
      messages.find((m: { destination: string }) => m.destination === destination);
    expect(of(to)).toMatchObject({
      campaign_id: one.message_id,
      text: 'Hello via data_sm',
      sender: 'MyShop',
    });
    expect(of(long)).toMatchObject({ campaign_id: whole.message_id, text, cost: 2 });
    expect(of(sar)).toMatchObject({ campaign_id: answers[1].message_id, text, cost: 2 });
    expect(of(unicode)).toMatchObject({ text: arabic, cost: 1 });
  });

  it('refuses a data_sm as it refuses a submit_sm: a blacklisted destination (0x400), an empty text, a receiver bind (0x04)', async () => {
    const listed = await blacklisted();
    const before = await credits();
    const refused = await data(esme, { destination_addr: listed, message_payload: gsm('hi') });
    expect(refused.command).toBe('data_sm_resp');
    expect(refused.command_status).toBe(0x400);
    expect((await data(esme, { destination_addr: number() })).command_status).toBe(0x45);
    const { esme: receiver } = await bindEsme(port, 'receiver', 'sender', 'pw');
    try {
      const r = await data(receiver, { destination_addr: number(), message_payload: gsm('hi') });
      expect(r.command).toBe('data_sm_resp');
      expect(r.command_status).toBe(0x04);
    } finally {
      await receiver.close();
    }
    expect(await credits()).toBe(before);
  });

  const multi = (on: Esme, destinations: (string | { dl_name: string })[], fields: Record<string, unknown>) =>
    on.request('submit_multi', {
      source_addr: 'MyShop',
      data_coding: 0,
      dest_address: destinations.map((d) =>
        typeof d === 'string' ? { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: d } : d,
      ),
      ...fields,
    });

  it('sends a submit_multi as one campaign: one message id, charged per destination sent; those kept out in unsuccess_sme with their status', async () => {
    const listed = await blacklisted();
    const [first, second] = [number(), number()];
    const before = await credits();
    const resp = await multi(esme, [first, listed, second, '12', first], {
      short_message: gsm('To you all'),
    });
    expect(resp.command).toBe('submit_multi_resp');
    expect(resp.command_status).toBe(0);
    expect(resp.message_id).toMatch(/^\d+$/);
    // The repeated destination is sent once, and is not unsuccessful.
    expect(resp.unsuccess_sme).toEqual([
      { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: listed, error_status_code: 0x400 },
      { dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '12', error_status_code: 0x0b },
    ]);
    expect(await credits()).toBe(before - 2);
    const messages = (await call(h().app, 'GET', '/messages', { token: account.token })).body.messages;
    const mine = messages.filter((m: { campaign_id: string }) => m.campaign_id === resp.message_id);
    expect(mine.map((m: { destination: string }) => m.destination).sort()).toEqual([first, second].sort());
    expect(mine[0]).toMatchObject({ text: 'To you all', sender: 'MyShop' });
  });

  it('joins a long submit_multi sent in UDH parts, charged per part and destination', async () => {
    const text = `${'m'.repeat(153)}${'n'.repeat(30)}`;
    const parts = [text.slice(0, 153), text.slice(153)];
    const to = [number(), number()];
    const before = await credits();
    const answers = [];
    for (let i = 0; i < parts.length; i++) {
      answers.push(
        await multi(esme, to, {
          esm_class: 0x40,
          short_message: Buffer.concat([Buffer.from([5, 0, 3, 0x57, 2, i + 1]), gsm(parts[i])]),
        }),
      );
    }
    expect(answers.map((a) => a.command_status)).toEqual([0, 0]);
    expect(answers[0].message_id).not.toBe(answers[1].message_id);
    expect(await credits()).toBe(before - 4);
    const messages = (await call(h().app, 'GET', '/messages', { token: account.token })).body.messages;
    for (const destination of to) {
      expect(messages.find((m: { destination: string }) => m.destination === destination)).toMatchObject({
        campaign_id: answers[1].message_id,
        text,
        cost: 2,
      });
    }
  });

  it('refuses a submit_multi with a distribution list (0x34), no destination (0x33), none kept, or on a receiver (0x04), charging nothing', async () => {
    const listed = await blacklisted();
    const before = await credits();
    const text = { short_message: gsm('hi') };
    expect((await multi(esme, [number(), { dl_name: 'customers' }], text)).command_status).toBe(0x34);
    expect((await multi(esme, [], text)).command_status).toBe(0x33);
    const none = await multi(esme, [listed, '12'], text);
    expect(none.command).toBe('submit_multi_resp');
    expect(none.command_status).toBe(0x400);
    const { esme: receiver } = await bindEsme(port, 'receiver', 'sender', 'pw');
    try {
      expect((await multi(receiver, [number()], text)).command_status).toBe(0x04);
    } finally {
      await receiver.close();
    }
    expect(await credits()).toBe(before);
  });

  it('takes UCS-2 (data_coding 8) and Latin-1 (3) text', async () => {
    const arabic = 'مرحبا بكم 👋';
    const to = number();
    const r = await submit({ destination_addr: to, data_coding: 8, short_message: ucs2(arabic) });
    expect(r.command_status).toBe(0);
    const latin = number();
    const l = await submit({
      destination_addr: latin,
      data_coding: 3,
      short_message: Buffer.from('Café à ÿ', 'latin1'),
    });
    expect(l.command_status).toBe(0);
    const messages = (await call(h().app, 'GET', '/messages', { token: account.token })).body.messages;
    expect(messages.find((m: { destination: string }) => m.destination === to)).toMatchObject({
      text: arabic,
      cost: 1,
    });
    expect(messages.find((m: { destination: string }) => m.destination === latin)).toMatchObject({
      text: 'Café à ÿ',
    });
    // A coding the server does not take is refused.
    expect(
      (await submit({ destination_addr: number(), data_coding: 4, short_message: Buffer.from([1, 2]) }))
        .command_status,
    ).toBe(0x404);
  });

  it('refuses a submit the account cannot pay (0x403), sending nothing', async () => {
    const poor = await h().account({ credits: 0 });
    await h().deps.services.smppUsers.createForAccount(poor.id, { system_id: 'poor', password: 'pw' });
    const { esme: poorEsme } = await bindEsme(port, 'transmitter', 'poor', 'pw');
    try {
      const r = await poorEsme.request('submit_sm', {
        source_addr: 'Shop',
        destination_addr: number(),
        short_message: gsm('hi'),
      });
      expect(r.command_status).toBe(0x403);
      const messages = (await call(h().app, 'GET', '/messages', { token: poor.token })).body.messages;
      expect(messages).toEqual([]);
    } finally {
      await poorEsme.close();
    }
  });

  it('answers ESME_RTHROTTLED (0x58) above the user tps, windowed submits served concurrently, a submit_multi counted per destination', async () => {
    const slow = await h().account({ credits: 100 });
    await h().deps.services.smppUsers.createForAccount(slow.id, {
      system_id: 'slow',
      password: 'pw',
      tps: 3,
    });
    const { esme: slowEsme } = await bindEsme(port, 'transceiver', 'slow', 'pw');
    try {
      // Five in flight at once, in one second of the clock: three sent, two throttled.
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          slowEsme.request('submit_sm', {
            source_addr: 'Shop',
            destination_addr: number(),
            short_message: gsm('hi'),
          }),
        ),
      );
      const statuses = answers.map((a) => a.command_status).sort();
      expect(statuses).toEqual([0, 0, 0, 0x58, 0x58]);
      h().clock.advance(1000);
      const next = await slowEsme.request('submit_sm', {
        source_addr: 'Shop',
        destination_addr: number(),
        short_message: gsm('hi'),
      });
      expect(next.command_status).toBe(0);
      // A submit_multi takes one per destination: two more do not fit this second; five fill a second of their own.
      const two = [number(), number()];
      expect(
        (await multi(slowEsme, two, { source_addr: 'Shop', short_message: gsm('hi') })).command_status,
      ).toBe(0);
      expect(
        (await multi(slowEsme, two, { source_addr: 'Shop', short_message: gsm('hi') })).command_status,
      ).toBe(0x58);
      h().clock.advance(1000);
      const five = Array.from({ length: 5 }, number);
      expect(
        (await multi(slowEsme, five, { source_addr: 'Shop', short_message: gsm('hi') })).command_status,
      ).toBe(0);
      expect(
        (
          await slowEsme.request('submit_sm', {
            source_addr: 'Shop',
            destination_addr: number(),
            short_message: gsm('hi'),
          })
        ).command_status,
      ).toBe(0x58);
    } finally {
      await slowEsme.close();
    }
  });

  it('refuses an invalid sender (0x0A) and a submit before any bind (0x04), charging nothing', async () => {
    const before = await credits();
    expect(
      (await submit({ source_addr: 'ab', destination_addr: number(), short_message: gsm('hi') }))
        .command_status,
    ).toBe(0x0a);
    const unbound = await connectEsme(port);
    try {
      const r = await unbound.request('submit_sm', {
        source_addr: 'Shop',
        destination_addr: number(),
        short_message: gsm('hi'),
      });
      expect(r.command_status).toBe(0x04);
    } finally {
      await unbound.close();
    }
    expect(await credits()).toBe(before);
  });

  it('refuses submit_sm on a receiver bind (0x04)', async () => {
    const { esme: receiver } = await bindEsme(port, 'receiver', 'sender', 'pw');
    try {
      const r = await receiver.request('submit_sm', {
        source_addr: 'Shop',
        destination_addr: number(),
        short_message: gsm('hi'),
      });
      expect(r.command_status).toBe(0x04);
    } finally {
      await receiver.close();
    }
  });
});
