// Per-account destination countries: an account's own list (else its parent's, else ALLOWED_COUNTRIES) filters
// its recipients exactly as ALLOWED_COUNTRIES does: counted in `not_allowed`, neither sent nor charged.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

const france = '33612345678';
const belgium = '32470123456';
const germany = '4915123456789';

const send = (h: Harness, a: TestAccount, to: string[], path = '/send') =>
  call(h.app, 'POST', path, {
    token: a.token,
    json: { sms: { message: { text: 'Hello' }, recipients: { gsm: to.map((value) => ({ value })) } } },
  });

describeEachDialect(
  'per-account countries',
  (h) => {
    const setLimits = (a: TestAccount, limits: Record<string, unknown>) =>
      h().deps.services.limits.set('cli', a.id, limits);

    it('the instance default ALLOWED_COUNTRIES applies to an account without its own list', async () => {
      const a = await h().account({ credits: 10 });
      const r = await send(h(), a, [france, belgium, germany]);
      expect(r.body).toMatchObject({ status: 1, total: 3, sent: 2, not_allowed: 1, cost: 2, credits: 8 });
    });

    it("an account's own list replaces the instance's: other countries are not_allowed, not sent, not charged", async () => {
      const a = await h().account({ credits: 10 });
      await setLimits(a, { countries: 'fr' });
      const r = await send(h(), a, [france, belgium, germany, '12']);
      expect(r.body).toMatchObject({
        status: 1,
        total: 4,
        sent: 1,
        not_allowed: 2,
        invalid: 1,
        cost: 1,
        credits: 9,
      });
      const messages = await h()
        .deps.store.db.selectFrom('messages')
        .select('recipient')
        .where('account_id', '=', a.id)
        .execute();
      expect(messages.map((m) => m.recipient)).toEqual([france]);
      // The campaign keeps the count.
      const campaign = await h()
        .deps.store.db.selectFrom('campaigns')
        .select(['not_allowed', 'sent', 'cost'])
        .where('id', '=', Number(r.body.ticket))
        .executeTakeFirstOrThrow();
      expect([campaign.not_allowed, campaign.sent, campaign.cost].map(Number)).toEqual([2, 1, 1]);
      // A simulation too.
      const simulated = await send(h(), a, [france, belgium], '/send/simulate');
      expect(simulated.body).toMatchObject({ status: 1, sent: 1, not_allowed: 1, cost: 1, credits: 8 });
    });

    it("all lifts the instance's list for the account; a sub-account inherits its parent's unless it has its own", async () => {
      const parent = await h().account({ credits: 10 });
      const sub = await h().account({ credits: 10, parentId: parent.id });
      const own = await h().account({ credits: 10, parentId: parent.id });
      await setLimits(parent, { countries: 'all' });
      await setLimits(own, { countries: 'BE' });
      expect((await send(h(), parent, [france, belgium, germany])).body).toMatchObject({
        sent: 3,
        not_allowed: 0,
      });
      expect((await send(h(), sub, [france, belgium, germany])).body).toMatchObject({
        sent: 3,
        not_allowed: 0,
      });
      expect((await send(h(), own, [france, belgium, germany])).body).toMatchObject({
        sent: 1,
        not_allowed: 2,
        credits: 9,
      });
      // inherit: back to the parent's.
      await setLimits(own, { countries: 'inherit' });
      expect((await send(h(), own, [france, belgium, germany])).body).toMatchObject({
        sent: 3,
        not_allowed: 0,
      });
    });

    it("a list send filters the list's contacts with the account's countries", async () => {
      const a = await h().account({ credits: 10 });
      await setLimits(a, { countries: 'DE' });
      const list = await call(h().app, 'POST', '/list', {
        token: a.token,
        json: { list: { name: 'mixed', contacts: { gsm: [{ value: france }, { value: germany }] } } },
      });
      const r = await call(h().app, 'POST', '/send/lists', {
        token: a.token,
        json: { sms: { message: { text: 'Hello' }, lists: [{ value: list.body.id }] } },
      });
      expect(r.body).toMatchObject({ status: 1, total: 2, sent: 1, not_allowed: 1, cost: 1, credits: 9 });
    });

    it('a country the numbering plan does not know is refused with -7 naming it, and nothing changes', async () => {
      const a = await h().account();
      await expect(setLimits(a, { countries: 'FR,XX' })).rejects.toMatchObject({
        status: -7,
        details: expect.stringContaining('XX is not a country the numbering plan knows'),
      });
      const shown = await h().deps.services.limits.show('cli', a.id);
      expect(shown.own.countries).toBeNull();
    });
  },
  { ALLOWED_COUNTRIES: 'FR,BE' },
);
