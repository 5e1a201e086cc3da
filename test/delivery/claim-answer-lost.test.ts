// A delivery claim whose COMMIT reached PostgreSQL but whose answer never came back (the connection cut in
// between, as by a restart): the messages are leased under the worker's term, and the worker never saw them.
// The failed claim retires the term, so they go back to the queue one lease later and are sent; before, the
// heartbeat renewed that term for as long as the process lived and they stayed `sending` for ever.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { call } from '../helpers/harness.ts';
import { pigeonViaProxy, type ViaProxy } from '../helpers/pg-via-proxy.ts';

const leaseSeconds = 3;
const schema = `t_claim_lost_${process.pid}`;

describe.skipIf(!inject('pgUrl'))('a claim whose answer was lost [postgres]', () => {
  const clock = new ManualClock();
  let pigeon: ViaProxy | undefined;
  let client: pg.Client;

  beforeAll(async () => {
    pigeon = await pigeonViaProxy(
      schema,
      { LEASE_SECONDS: String(leaseSeconds), RATE_LIMIT_IP_RPS: '0' },
      { clock },
    );
    client = new pg.Client({ connectionString: inject('pgUrl') });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await pigeon?.close();
  });

  it('leaves no message leased for ever: the term is retired, the messages come back one lease later and are claimed again', async () => {
    const { deps, app, proxy } = pigeon!;
    const { token } = await deps.services.accounts.createAccount({
      email: 'claim-lost@example.com',
      password: 'correct horse battery',
      credits: 100,
    });
    const sent = await call(app, 'POST', '/send', {
      token,
      json: {
        sms: {
          message: { text: 'Lost answer', pushtype: 'alert' },
          recipients: { gsm: [{ value: '33612345671' }, { value: '33612345672' }, { value: '33612345673' }] },
        },
      },
    });
    expect(sent.body.status, sent.body.details).toBe(1);
    const delivery = deps.services.delivery;

    const cut = proxy.cutAfterCommit();
    await expect(delivery.claim(10)).rejects.toThrow();
    await cut;
    const leased = await client.query(`select state, lease_owner from ${schema}.messages order by id`);
    expect(leased.rows.map((m) => m.state)).toEqual(['sending', 'sending', 'sending']);
    const term = Number(leased.rows[0].lease_owner);
    expect(delivery.leases.holds(term)).toBe(true);

    // The worker goes on under a new term; the old one is renewed no more and lapses one lease later.
    expect(await delivery.leases.term()).not.toBe(term);
    clock.advance(leaseSeconds * 1000 + 1);
    expect(delivery.leases.holds(term)).toBe(false);
    expect(await delivery.releaseExpiredLeases()).toBe(3);
    const again = await delivery.claim(10);
    expect(again).toHaveLength(3);
    expect(again.every((m) => m.lease_owner !== term)).toBe(true);
  });
});
