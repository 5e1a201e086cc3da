import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('number lookup', (h) => {
  it('POST /lookup answers from the numbering plan in SMSFactor shape, stores each answer, and charges nothing by default', async () => {
    const a = await h().account({ credits: 10 });
    const r = await call(h().app, 'POST', '/lookup', {
      token: a.token,
      json: { lookup: { to: ['33612345678', '+33 1 23 45 67 89', '3361234', 'not a number'] } },
    });
    expect(r.body).toMatchObject({ status: 1, message: 'OK', cost: 0, credits: 10 });
    const [mobile, fixed, short, junk] = r.body.response.lookup;
    expect(mobile).toEqual({
      to: '33612345678',
      mccMnc: '',
      imsi: '',
      originalNetwork: { networkName: '', networkPrefix: '', countryName: 'France', countryPrefix: '33' },
      ported: null,
      roaming: null,
      countryCode: 'FR',
      numberType: 'MOBILE',
      status: {
        name: 'VALID',
        description: 'Valid mobile number',
        detailed:
          'numbering plan only: no network was queried; the number is in a FR range for mobile numbers',
      },
      error: { id: 0, description: 'No error', permanent: false },
    });
    expect(fixed).toMatchObject({ to: '33123456789', numberType: 'FIXED_LINE', status: { name: 'VALID' } });
    expect(short).toMatchObject({
      to: '3361234',
      status: { name: 'INVALID' },
      error: { id: 1, permanent: true },
    });
    expect(junk).toMatchObject({ to: 'not a number', status: { name: 'INVALID' } });
    expect(junk.status.detailed).toMatch(/nothing was looked up/);
    const stored = await h()
      .deps.store.db.selectFrom('lookups')
      .select(['number', 'status'])
      .where('account_id', '=', a.id)
      .orderBy('id')
      .execute();
    expect(stored).toEqual([
      { number: '33612345678', status: 'VALID' },
      { number: '33123456789', status: 'VALID' },
      { number: '3361234', status: 'INVALID' },
    ]);
  });

  it('a number on the account NPAI list says so; in XML, one <to> or several', async () => {
    const a = await h().account();
    await call(h().app, 'POST', '/npai', {
      token: a.token,
      json: { npai: { contacts: { gsm: [{ value: '33611111111' }] } } },
    });
    const one = await call(h().app, 'POST', '/lookup', {
      token: a.token,
      xml: '<lookup><to>33611111111</to></lookup>',
    });
    expect(one.contentType).toContain('application/xml');
    expect(one.body).toMatchObject({ status: '1', cost: '0' });
    expect(one.body.response.lookup).toMatchObject({
      to: '33611111111',
      status: { name: 'NPAI', description: 'Number on the NPAI list' },
      error: { id: '2', permanent: 'true' },
    });
    const two = await call(h().app, 'POST', '/lookup', {
      token: a.token,
      xml: '<lookup><to>33611111111</to><to>33622222222</to></lookup>',
    });
    expect(two.body.response.lookup.map((l: { status: { name: string } }) => l.status.name)).toEqual([
      'NPAI',
      'VALID',
    ]);
    // Another account's NPAI list is not this one's.
    const b = await h().account();
    const other = await call(h().app, 'POST', '/lookup', {
      token: b.token,
      json: { lookup: { to: ['33611111111'] } },
    });
    expect(other.body.response.lookup[0].status.name).toBe('VALID');
  });

  it('bad input: no numbers, too many, not a list of numbers', async () => {
    const a = await h().account();
    const none = await call(h().app, 'POST', '/lookup', { token: a.token, json: { lookup: {} } });
    expect(none.body).toMatchObject({ status: -7, details: 'lookup.to is required: one number or more' });
    const many = await call(h().app, 'POST', '/lookup', {
      token: a.token,
      json: { lookup: { to: Array.from({ length: 1001 }, (_, i) => `336${String(i).padStart(8, '0')}`) } },
    });
    expect(many.body).toMatchObject({
      status: -7,
      details: 'lookup.to has 1001 numbers; at most 1000 per request',
    });
    const noRoot = await call(h().app, 'POST', '/lookup', { token: a.token, json: { to: ['33612345678'] } });
    expect(noRoot.body.status).toBe(-7);
  });
});

describeEachDialect(
  'number lookup with LOOKUP_COST',
  (h) => {
    it('charges LOOKUP_COST per well-formed number, with a ledger line; -3 and nothing stored when short', async () => {
      const a = await h().account({ credits: 5 });
      const r = await call(h().app, 'POST', '/lookup', {
        token: a.token,
        json: { lookup: { to: ['33612345678', '33612345678', 'junk'] } },
      });
      // One distinct well-formed number: 2 credits.
      expect(r.body).toMatchObject({ status: 1, cost: 2, credits: 3 });
      const ledger = await h()
        .deps.store.db.selectFrom('credit_ledger')
        .select(['delta', 'reason'])
        .where('account_id', '=', a.id)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(ledger).toEqual({ delta: -2, reason: 'lookup' });
      const short = await call(h().app, 'POST', '/lookup', {
        token: a.token,
        json: { lookup: { to: ['33612345671', '33612345672'] } },
      });
      expect(short.body).toMatchObject({ status: -3 });
      const count = await h()
        .deps.store.db.selectFrom('lookups')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', a.id)
        .executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(1);
    });
  },
  { LOOKUP_COST: '2' },
);
