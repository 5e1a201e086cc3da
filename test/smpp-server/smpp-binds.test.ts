// Binds to Pigeon's SMPP server: the three modes with an account's SMPP user, refusals answered with a
// bind_*_resp of non-zero status (never a bare close), max binds, the brake on failed binds, enquire_link,
// unbind, and a connection sending garbage closed without disturbing the others.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmppServer } from '../../src/smpp-server/smpp-server.ts';
import { describeEachDialect } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { bindEsme, connectEsme, type Esme, startSmppServer } from './smpp-client.ts';

describeEachDialect('SMPP server binds', (h) => {
  let server: SmppServer;
  let port: number;
  const open: Esme[] = [];
  const bind = async (...args: Parameters<typeof bindEsme> extends [number, ...infer R] ? R : never) => {
    const bound = await bindEsme(port, ...args);
    open.push(bound.esme);
    return bound;
  };

  beforeAll(async () => {
    ({ server, port } = await startSmppServer(h(), { brakeFailures: 3 }));
    const account = await h().account();
    await h().deps.services.smppUsers.createForAccount(account.id, {
      system_id: 'binder',
      password: 'secret1',
      max_binds: 3,
      tps: 0,
    });
  });
  afterAll(async () => {
    for (const esme of open) await esme.close();
    await server.close();
  });

  it('binds as transceiver, transmitter and receiver with the right password, and answers enquire_link', async () => {
    for (const mode of ['transceiver', 'transmitter', 'receiver'] as const) {
      const { esme, resp } = await bind(mode, 'binder', 'secret1');
      expect(resp.command).toBe(`bind_${mode}_resp`);
      expect(resp.command_status).toBe(0);
      expect(resp.system_id).toBe('Pigeon');
      const link = await esme.request('enquire_link');
      expect(link.command).toBe('enquire_link_resp');
      expect(link.command_status).toBe(0);
    }
    for (const esme of open.splice(0)) {
      const resp = await esme.request('unbind');
      expect(resp.command).toBe('unbind_resp');
      await waitFor(() => esme.closed, 'the unbound connection closed');
    }
  });

  it('refuses a wrong password (0x0E) and an unknown system_id (0x0F) with a bind_resp, not a bare close', async () => {
    const wrong = await bind('transceiver', 'binder', 'nope');
    expect(wrong.resp.command).toBe('bind_transceiver_resp');
    expect(wrong.resp.command_status).toBe(0x0e);
    const unknown = await bind('transmitter', 'nobody', 'secret1');
    expect(unknown.resp.command).toBe('bind_transmitter_resp');
    expect(unknown.resp.command_status).toBe(0x0f);
    // Still connected: the ESME may try again on the same connection.
    expect(wrong.esme.closed).toBe(false);
    const retry = await wrong.esme.request('bind_transceiver', { system_id: 'binder', password: 'secret1' });
    expect(retry.command_status).toBe(0);
    for (const esme of open.splice(0)) await esme.close();
  });

  it('enforces max_binds: the bind past it is refused with 0x0D', async () => {
    for (let i = 0; i < 3; i++)
      expect((await bind('transceiver', 'binder', 'secret1')).resp.command_status).toBe(0);
    const fourth = await bind('receiver', 'binder', 'secret1');
    expect(fourth.resp.command_status).toBe(0x0d);
    // One leaves: a new bind takes its place.
    await open[0].close();
    await waitFor(() => server.sessions().length === open.length - 1, 'the server saw the close');
    expect((await bind('receiver', 'binder', 'secret1')).resp.command_status).toBe(0);
    for (const esme of open.splice(0)) await esme.close();
  });

  it('closes a connection whose command_length is out of bounds, and only that one', async () => {
    const { esme: good } = await bind('transceiver', 'binder', 'secret1');
    for (const garbage of [
      Buffer.from([0, 0, 0, 5, 1, 2, 3, 4]),
      Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 0]),
    ]) {
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.on('error', () => {});
      socket.write(garbage);
      await closed;
    }
    expect((await good.request('enquire_link')).command_status).toBe(0);
    // A command not served is answered generic_nack, the connection kept.
    const nack = await good.request('replace_sm', { message_id: '1', source_addr: '', short_message: 'x' });
    expect(nack.command).toBe('generic_nack');
    expect(nack.command_status).toBe(0x03);
    expect((await good.request('enquire_link')).command_status).toBe(0);
    for (const esme of open.splice(0)) await esme.close();
  });

  it('brakes an address after RATE_LIMIT_AUTH_FAILURES failed binds: even the right password is refused (0x0D)', async () => {
    // The earlier test failed twice from this address; one more reaches the brake of 3.
    const esme = await connectEsme(port);
    open.push(esme);
    expect(
      (await esme.request('bind_transceiver', { system_id: 'binder', password: 'bad' })).command_status,
    ).toBe(0x0e);
    const braked = await esme.request('bind_transceiver', { system_id: 'binder', password: 'secret1' });
    expect(braked.command_status).toBe(0x0d);
    // The window ends: binds are checked again.
    h().clock.advance(60_000);
    expect(
      (await esme.request('bind_transceiver', { system_id: 'binder', password: 'secret1' })).command_status,
    ).toBe(0);
    for (const e of open.splice(0)) await e.close();
  });
});

describeEachDialect('SMPP server: a deleted user', (h) => {
  it('loses the binds it had: they are closed, and new ones refused', async () => {
    const { server, port } = await startSmppServer(h());
    try {
      const account = await h().account();
      await h().deps.services.smppUsers.createForAccount(account.id, { system_id: 'gone', password: 'pw' });
      const { esme, resp } = await bindEsme(port, 'transceiver', 'gone', 'pw');
      expect(resp.command_status).toBe(0);
      await h().deps.services.smppUsers.deleteAny('gone');
      await waitFor(() => esme.closed, 'the deleted user’s bind closed');
      const again = await bindEsme(port, 'transceiver', 'gone', 'pw');
      expect(again.resp.command_status).toBe(0x0f);
      await again.esme.close();
    } finally {
      await server.close();
    }
  });
});

describe('SMPP users', () => {
  it('is checked at creation: 8 characters at most for the password, 15 for the system_id', async () => {
    const { createHarness } = await import('../helpers/harness.ts');
    const h = await createHarness('sqlite');
    try {
      const account = await h.account();
      const users = h.deps.services.smppUsers;
      await expect(
        users.createForAccount(account.id, { system_id: 'x', password: '123456789' }),
      ).rejects.toThrow();
      await expect(
        users.createForAccount(account.id, { system_id: 'a'.repeat(16), password: 'p' }),
      ).rejects.toThrow();
      await expect(
        users.createForAccount(account.id, { system_id: 'ok', password: 'p', allowed_ips: 'nope' }),
      ).rejects.toThrow();
      const created = await users.createForAccount(account.id, { system_id: 'ok', password: '12345678' });
      expect(created).toMatchObject({
        system_id: 'ok',
        account_id: String(account.id),
        tps: 100,
        max_binds: 4,
      });
      await expect(
        users.createForAccount(account.id, { system_id: 'ok', password: 'p' }),
      ).rejects.toMatchObject({
        details: expect.stringMatching(/taken/),
      });
      await expect(users.createForAccount(999_999, { system_id: 'other', password: 'p' })).rejects.toThrow();
    } finally {
      await h.close();
    }
  });
});
