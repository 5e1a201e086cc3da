// The SMPP server on several API processes sharing one database (here two servers, each with its own bind
// registry, as two processes have): a user's max_binds holds across them, a bind closed on one frees a place
// on the other, the binds of a server that stopped renewing stop counting one TTL later, and each server
// throttles the user at its share of the user's tps.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { BindRegistry } from '../../src/smpp-server/smpp-binds.ts';
import type { SmppServer } from '../../src/smpp-server/smpp-server.ts';
import { encodeGsm7 } from '../../src/sms/segments.ts';
import { describeEachDialect } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { bindEsme, bindTtlMs, type Esme, startSmppServer } from './smpp-client.ts';

const bindFail = 0x0d;

describeEachDialect('SMPP server on several processes', (h) => {
  const servers: { server: SmppServer; port: number; binds: BindRegistry }[] = [];
  const open: Esme[] = [];
  const users = new Map<string, number>();

  beforeAll(async () => {
    servers.push(await startSmppServer(h()), await startSmppServer(h()));
    for (const [systemId, maxBinds, tps] of [
      ['twice', 2, 0],
      ['spread', 3, 0],
      ['shared', 4, 4],
    ] as const) {
      const account = await h().account({ credits: 100 });
      await h().deps.services.smppUsers.createForAccount(account.id, {
        system_id: systemId,
        password: 'pw',
        tps,
        max_binds: maxBinds,
      });
      const [row] = await h()
        .deps.store.db.selectFrom('smpp_users')
        .select('id')
        .where('system_id', '=', systemId)
        .execute();
      users.set(systemId, Number(row.id));
    }
  });
  afterEach(async () => {
    for (const esme of open.splice(0)) await esme.close();
  });
  afterAll(async () => {
    for (const { server } of servers) await server.close();
  });

  /** Binds `systemId` on server `on` (0 or 1): the bind's command_status. */
  async function bind(on: number, systemId: string): Promise<number> {
    const { esme, resp } = await bindEsme(servers[on].port, 'transceiver', systemId, 'pw');
    open.push(esme);
    return resp.command_status as number;
  }

  const aliveBinds = async (systemId: string) =>
    (
      await h()
        .deps.store.db.selectFrom('smpp_binds')
        .select('id')
        .where('smpp_user_id', '=', users.get(systemId)!)
        .where('alive_until', '>=', h().clock.now())
        .execute()
    ).length;

  it('holds max_binds across the servers; a bind closed on one frees a place on the other', async () => {
    expect(await bind(0, 'twice')).toBe(0);
    expect(await bind(1, 'twice')).toBe(0);
    expect(await bind(0, 'twice')).toBe(bindFail);
    expect(await bind(1, 'twice')).toBe(bindFail);
    const onSecond = open[1];
    await onSecond.close();
    await waitFor(async () => (await aliveBinds('twice')) === 1, 'the closed bind released');
    expect(await bind(0, 'twice')).toBe(0);
    expect(await aliveBinds('twice')).toBe(2);
  });

  it('stops counting the binds of a server that stopped renewing them one TTL after their last renewal', async () => {
    // A bind of a server that died (killed, its machine lost) while it was up.
    const now = h().clock.now();
    await h()
      .deps.store.db.insertInto('smpp_binds')
      .values({
        smpp_user_id: users.get('spread')!,
        server: 'a-server-that-died',
        bound_at: now,
        alive_until: now + bindTtlMs,
      })
      .execute();
    expect(await bind(0, 'spread')).toBe(0);
    expect(await bind(1, 'spread')).toBe(0);
    expect(await bind(0, 'spread')).toBe(bindFail);

    h().clock.advance(bindTtlMs + 1);
    // The live servers renew theirs; the dead one's no longer counts.
    for (const { binds } of servers) await binds.sync();
    expect(await aliveBinds('spread')).toBe(2);
    expect(await bind(1, 'spread')).toBe(0);
    expect(await bind(0, 'spread')).toBe(bindFail);
    // Deleted a TTL later still.
    h().clock.advance(bindTtlMs);
    for (const { binds } of servers) await binds.sync();
    const dead = await h()
      .deps.store.db.selectFrom('smpp_binds')
      .select('id')
      .where('server', '=', 'a-server-that-died')
      .execute();
    expect(dead).toEqual([]);
  });

  it('throttles the user on each server at its share of the binds: tps 4 over two servers is 2 a second on each', async () => {
    const submit = (esme: Esme, n: number) =>
      esme.request('submit_sm', {
        source_addr: 'MyShop',
        destination_addr: `3361234${String(5300 + n)}`,
        short_message: Buffer.from(encodeGsm7('Share')),
      });
    expect(await bind(0, 'shared')).toBe(0);
    const [alone] = open.slice(-1);
    for (const { binds } of servers) await binds.sync();
    // Alone on the first server: the whole tps there.
    h().clock.advance(1000);
    const first = [];
    for (let n = 0; n < 5; n++) first.push((await submit(alone, n)).command_status);
    expect(first).toEqual([0, 0, 0, 0, 0x58]);

    // A second bind, on the other server: each server now has half the binds, so half the tps (the first
    // learns it at its sync).
    expect(await bind(1, 'shared')).toBe(0);
    const [second] = open.slice(-1);
    h().clock.advance(1000);
    const there = [];
    for (let n = 5; n < 8; n++) there.push((await submit(second, n)).command_status);
    expect(there).toEqual([0, 0, 0x58]);
    await servers[0].binds.sync();
    const here = [];
    for (let n = 8; n < 11; n++) here.push((await submit(alone, n)).command_status);
    expect(here).toEqual([0, 0, 0x58]);
  });
});
