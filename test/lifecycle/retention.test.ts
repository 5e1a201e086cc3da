import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

const day = 86_400_000;

/** What a retention pass answers when it deletes nothing. */
const nothingDeleted = { message: 0, list: 0, campaign: 0, mo: 0, lookup: 0, audit: 0 };

describeEachDialect('retention', (h) => {
  it('GET /retention keeps everything until set; PUT sets some kinds, checks every value, in JSON and XML', async () => {
    const a = await h().account();
    const initial = await call(h().app, 'GET', '/retention', { token: a.token });
    expect(initial.body).toEqual({
      status: 1,
      message: 'OK',
      data_retention: { message: '-1', list: '-1', campaign: '-1', mo: '-1', lookup: '-1', survey: '-1' },
    });
    const put = await call(h().app, 'PUT', '/retention', {
      token: a.token,
      json: { retention: { message: '6M', mo: '30d' } },
    });
    expect(put.body).toEqual({
      status: 1,
      message: 'OK',
      retention: { message: '6m', list: '-1', campaign: '-1', mo: '30d', lookup: '-1', survey: '-1' },
    });
    const xml = await call(h().app, 'PUT', '/retention', {
      token: a.token,
      xml: '<retention><lookup>12m</lookup></retention>',
    });
    expect(xml.body).toMatchObject({ status: '1', retention: { message: '6m', mo: '30d', lookup: '12m' } });
    const read = await call(h().app, 'GET', '/retention', { token: a.token, accept: 'application/xml' });
    expect(read.body.data_retention).toEqual({
      message: '6m',
      list: '-1',
      campaign: '-1',
      mo: '30d',
      lookup: '12m',
      survey: '-1',
    });

    for (const [body, details] of [
      [{ retention: { message: '6y' } }, /retention.message "6y" must be a number of days/],
      [{ retention: { list: '0d' } }, /retention.list "0d" must be between 1d and 3650d/],
      [{ retention: { sms: '6m' } }, /retention.sms is not a setting/],
      [{ retention: {} }, /retention needs at least one of/],
    ] as const) {
      const bad = await call(h().app, 'PUT', '/retention', { token: a.token, json: body });
      expect(bad.body).toMatchObject({ status: -7 });
      expect(bad.body.details).toMatch(details);
    }
    // Nothing of a refused request was saved; another account's settings are its own.
    expect((await call(h().app, 'GET', '/retention', { token: a.token })).body.data_retention.list).toBe(
      '-1',
    );
    const b = await h().account();
    expect((await call(h().app, 'GET', '/retention', { token: b.token })).body.data_retention.message).toBe(
      '-1',
    );
  });

  it("SMSFactor's survey setting is taken, checked like the others, shown by GET, and deletes nothing", async () => {
    const a = await h().account();
    const put = await call(h().app, 'PUT', '/retention', {
      token: a.token,
      json: { retention: { survey: '2m' } },
    });
    expect(put.body).toMatchObject({ status: 1, retention: { survey: '2m', message: '-1' } });
    const xml = await call(h().app, 'PUT', '/retention', {
      token: a.token,
      xml: '<retention><survey>90d</survey></retention>',
    });
    expect(xml.body).toMatchObject({ status: '1', retention: { survey: '90d' } });
    const read = await call(h().app, 'GET', '/retention', { token: a.token });
    expect(read.body.data_retention).toEqual({
      message: '-1',
      list: '-1',
      campaign: '-1',
      mo: '-1',
      lookup: '-1',
      survey: '90d',
    });
    const bad = await call(h().app, 'PUT', '/retention', {
      token: a.token,
      json: { retention: { survey: '2y' } },
    });
    expect(bad.body).toMatchObject({ status: -7 });
    expect(bad.body.details).toMatch(/retention.survey "2y" must be a number of days/);
    // An account that limits only surveys has nothing for the job to delete.
    expect(await h().deps.services.retention.runOnce()).toEqual(nothingDeleted);
  });

  it('the job deletes exactly what is older than each setting, leaves unfinished work and other accounts alone', async () => {
    const { db } = h().deps.store;
    const { retention } = h().deps.services;
    const a = await h().account({ credits: 100 });
    const b = await h().account({ credits: 100 });
    const send = async (token: string, to: string[]) => {
      const r = await call(h().app, 'POST', '/send', {
        token,
        json: {
          sms: {
            message: { text: 'Hi <-short->', links: ['https://example.com/x'] },
            recipients: { gsm: to.map((value) => ({ value })) },
          },
        },
      });
      expect(r.body.status).toBe(1);
      return Number(r.body.ticket);
    };
    const stamp = async (campaign: number, state: string) =>
      db.updateTable('messages').set({ state, dlr_status: 3 }).where('campaign_id', '=', campaign).execute();
    const reply = (accountId: number, campaignId: number) =>
      db
        .insertInto('replies')
        .values({
          account_id: accountId,
          campaign_id: campaignId,
          type: 'MO',
          number: '33611111111',
          text: 'hello',
          gsmsmsid: null,
          received_at: h().clock.now(),
        })
        .execute();
    const addList = (token: string, numbers: string[]) =>
      call(h().app, 'POST', '/list', {
        token,
        json: { list: { name: 'l', contacts: { gsm: numbers.map((value) => ({ value })) } } },
      });
    const lookup = (token: string) =>
      call(h().app, 'POST', '/lookup', { token, json: { lookup: { to: ['33612345678'] } } });

    // Forty days ago: A's old campaign (delivered), an old one still queued, old replies, contacts, lookups.
    const oldDone = await send(a.token, ['33612345671', '33612345672']);
    await stamp(oldDone, 'delivered');
    const oldQueued = await send(a.token, ['33612345673']);
    await reply(a.id, oldDone);
    await addList(a.token, ['33612345674', '33612345675']);
    await lookup(a.token);
    const bOld = await send(b.token, ['33612345676']);
    await stamp(bOld, 'delivered');
    await reply(b.id, bOld);
    h().clock.advance(40 * day);
    // Now: A's recent campaign, reply, contacts and lookup.
    const recent = await send(a.token, ['33612345677']);
    await stamp(recent, 'delivered');
    await reply(a.id, recent);
    await addList(a.token, ['33612345678']);
    await lookup(a.token);

    await call(h().app, 'PUT', '/retention', {
      token: a.token,
      json: { retention: { message: '30d', mo: '30d', list: '30d', lookup: '30d' } },
    });
    expect(await retention.runOnce()).toEqual({
      message: 2,
      list: 2,
      campaign: 0,
      mo: 1,
      lookup: 1,
      audit: 0,
    });
    const messagesOf = async (campaign: number) =>
      (await db.selectFrom('messages').select('state').where('campaign_id', '=', campaign).execute()).length;
    expect([await messagesOf(oldDone), await messagesOf(oldQueued), await messagesOf(recent)]).toEqual([
      0, 1, 1,
    ]);
    const count = async (
      table: 'replies' | 'contacts' | 'lookups' | 'campaigns' | 'links',
      accountId: number,
    ) =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', '=', accountId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count('replies', a.id)).toBe(1);
    expect(await count('contacts', a.id)).toBe(1);
    expect(await count('lookups', a.id)).toBe(1);
    expect(await count('campaigns', a.id)).toBe(3);
    // The old campaign still reads back; its counters now count what is left.
    const kept = await call(h().app, 'GET', `/campaign/${oldDone}`, { token: a.token });
    expect(kept.body.status).toBe(1);

    // Campaigns too: the old finished one goes with its links; the old one still queued stays.
    await call(h().app, 'PUT', '/retention', { token: a.token, json: { retention: { campaign: '30d' } } });
    const second = await retention.runOnce();
    expect(second.campaign).toBeGreaterThanOrEqual(2); // its links (one per recipient), then the campaign
    // The audit log goes with the campaign setting: the entries of the account's creation, its two old sends,
    // its old list and its old lookup.
    expect(second.audit).toBe(5);
    expect((await call(h().app, 'GET', `/campaign/${oldDone}`, { token: a.token })).body.status).toBe(-5);
    expect((await call(h().app, 'GET', `/campaign/${oldQueued}`, { token: a.token })).body.status).toBe(1);
    expect(await count('campaigns', a.id)).toBe(2);
    expect(
      Number(
        (
          await db
            .selectFrom('links')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('campaign_id', '=', oldDone)
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(0);
    // B set nothing: all of its data is there.
    expect(await messagesOf(bOld)).toBe(1);
    expect(await count('replies', b.id)).toBe(1);
    // A pass with nothing left to delete deletes nothing.
    expect(await retention.runOnce()).toEqual(nothingDeleted);
  });

  it('each delete is bounded: a purge takes at most its limit of rows', async () => {
    const a = await h().account({ credits: 100 });
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'x' },
          recipients: { gsm: ['33612345601', '33612345602', '33612345603'].map((value) => ({ value })) },
        },
      },
    });
    await h()
      .deps.store.db.updateTable('messages')
      .set({ state: 'failed' })
      .where('campaign_id', '=', Number(r.body.ticket))
      .execute();
    const { deliveryLifecycle } = h().deps.services;
    const later = h().clock.now() + day;
    expect(await deliveryLifecycle.purgeMessages(a.id, later, 2)).toBe(2);
    expect(await deliveryLifecycle.purgeMessages(a.id, later, 2)).toBe(1);
    expect(await deliveryLifecycle.purgeMessages(a.id, later, 2)).toBe(0);
  });
});
