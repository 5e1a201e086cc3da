// The account surface: GET /credits, GET /account, POST /account (a sub-account of the caller), GET
// /sub-accounts and /sub-accounts/:id, with SMSFactor's field names in JSON and XML; a parent sees its own
// sub-accounts only.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

let created = 0;
const uniqueEmail = (name: string) => `${name}-${++created}-${Date.now()}@example.com`;

async function createSub(h: Harness, parent: TestAccount, fields: Record<string, unknown> = {}) {
  const email = uniqueEmail('sub');
  const r = await call(h.app, 'POST', '/account', {
    token: parent.token,
    json: { account: { email, password: 'sub-account-pw', isChild: 1, ...fields } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return { id: r.body.id as string, email };
}

describeEachDialect('accounts', (h) => {
  it('GET /credits answers credits, postpaid "0" and unlimited, in JSON and XML', async () => {
    const a = await h().account({ credits: 321 });
    const json = await call(h().app, 'GET', '/credits', { token: a.token });
    expect(json.body).toEqual({ status: 1, message: 'OK', credits: 321, postpaid: '0', unlimited: '0' });
    const xml = await call(h().app, 'GET', '/credits', { token: a.token, accept: 'application/xml' });
    expect(xml.body).toEqual({ status: '1', message: 'OK', credits: '321', postpaid: '0', unlimited: '0' });
    const unlimited = await h().account({ parentId: a.id, unlimited: true, credits: 0 });
    const child = await call(h().app, 'GET', '/credits', { token: unlimited.token });
    expect(child.body).toEqual({ status: 1, message: 'OK', credits: 321, postpaid: '0', unlimited: '1' });
  });

  it('POST /account creates a sub-account of the caller with its profile; the reads answer it', async () => {
    const parent = await h().account({ credits: 50 });
    const email = uniqueEmail('Shop');
    const r = await call(h().app, 'POST', '/account', {
      token: parent.token,
      json: {
        account: {
          email,
          password: 'sub-account-pw',
          firstname: 'Ann',
          lastname: 'Lee',
          company: 'Shop & Co',
          type: 'company',
          phone: '+33612345678',
          address1: '1 rue de la Paix',
          address2: 'Bât. B',
          zip: '75002',
          city: 'Paris',
          country_code: 'fr',
          sender: 'MyShop',
          description: 'the shop',
          isChild: 1,
          unlimited: 0,
        },
      },
    });
    expect(r.body).toEqual({ status: 1, message: 'OK', id: expect.stringMatching(/^\d+$/), active: 1 });
    const expected = {
      client_id: r.body.id,
      email: email.toLowerCase(),
      firstname: 'Ann',
      lastname: 'Lee',
      company: 'Shop & Co',
      type: 'company',
      phone: '33612345678',
      address1: '1 rue de la Paix',
      address2: 'Bât. B',
      zip: '75002',
      city: 'Paris',
      country: 'France',
      country_code: 'FR',
      lang: '',
      credits: 0,
      postpaid: '0',
      unlimited: 0,
      description: 'the shop',
      // The Java SDK reads a sub-account's senderid as an integer: the sender goes in `sender`.
      senderid: null,
      status: 1,
      state: 'active',
      sender: 'MyShop',
    };
    const list = await call(h().app, 'GET', '/sub-accounts', { token: parent.token });
    expect(list.body).toEqual({ status: 1, message: 'OK', 'sub-accounts': [expected] });
    const one = await call(h().app, 'GET', `/sub-accounts/${r.body.id}`, { token: parent.token });
    expect(one.body).toEqual({ status: 1, message: 'OK', 'sub-account': expected });

    // The sub-account reads itself with a token its parent made for it.
    const token = await call(h().app, 'POST', `/token/account/${r.body.id}`, {
      token: parent.token,
      json: { token: { name: 'sub' } },
    });
    const own = await call(h().app, 'GET', '/account', { token: token.body.token });
    expect(own.body).toEqual({ status: 1, message: 'OK', account: { ...expected, senderid: 'MyShop' } });
    const xml = await call(h().app, 'GET', '/account', {
      token: token.body.token,
      accept: 'application/xml',
    });
    expect(xml.body.account).toEqual({
      ...Object.fromEntries(Object.entries(expected).map(([k, v]) => [k, v === null ? '' : String(v)])),
      senderid: 'MyShop',
    });
  });

  it('GET /account answers the caller with empty strings for unset fields, and senderid null as in GET /sub-accounts', async () => {
    const a = await h().account({ credits: 7 });
    const r = await call(h().app, 'GET', '/account', { token: a.token });
    expect(r.body.account).toEqual({
      client_id: String(a.id),
      email: expect.stringContaining('@example.com'),
      firstname: '',
      lastname: '',
      company: '',
      type: '',
      phone: '',
      address1: '',
      address2: '',
      zip: '',
      city: '',
      country: '',
      country_code: '',
      lang: '',
      credits: 7,
      postpaid: '0',
      unlimited: 0,
      description: '',
      senderid: null,
      status: 1,
      state: 'active',
      sender: '',
    });
    // The same account read by its parent: the same senderid.
    const parent = await h().account();
    const sub = await createSub(h(), parent);
    const subToken = await call(h().app, 'POST', `/token/account/${sub.id}`, {
      token: parent.token,
      json: { token: { name: 'sub' } },
    });
    const own = await call(h().app, 'GET', '/account', { token: subToken.body.token });
    const listed = await call(h().app, 'GET', '/sub-accounts', { token: parent.token });
    expect(own.body.account.senderid).toBeNull();
    expect(listed.body['sub-accounts'][0].senderid).toBeNull();
  });

  it('an unlimited sub-account shows its parent credits in every read', async () => {
    const parent = await h().account({ credits: 90 });
    const sub = await createSub(h(), parent, { unlimited: '1' });
    const list = await call(h().app, 'GET', '/sub-accounts', { token: parent.token });
    expect(list.body['sub-accounts']).toEqual([
      expect.objectContaining({ client_id: sub.id, unlimited: 1, credits: 90 }),
    ]);
  });

  it('POST /account reads XML, and GET /sub-accounts answers repeated elements', async () => {
    const parent = await h().account();
    const email = uniqueEmail('xml');
    const r = await call(h().app, 'POST', '/account', {
      token: parent.token,
      xml: `<account><email>${email}</email><password>sub-account-pw</password><type>association</type><isChild>1</isChild><unlimited>1</unlimited><sender>33612345678</sender></account>`,
    });
    expect(r.body).toEqual({ status: '1', message: 'OK', id: expect.stringMatching(/^\d+$/), active: '1' });
    await createSub(h(), parent);
    const list = await call(h().app, 'GET', '/sub-accounts', {
      token: parent.token,
      accept: 'application/xml',
    });
    expect(list.raw).toContain('<sub-accounts><client_id>');
    expect(list.body['sub-accounts']).toHaveLength(2);
    expect(list.body['sub-accounts'][0]).toMatchObject({
      client_id: r.body.id,
      email,
      type: 'association',
      unlimited: '1',
      senderid: '',
      sender: '33612345678',
      status: '1',
    });
  });

  it('POST /account checks every field and names it in its -7', async () => {
    const parent = await h().account();
    const taken = await createSub(h(), parent);
    const base = { email: uniqueEmail('v'), password: 'long enough', isChild: 1 };
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [{ email: undefined }, 'account.email is required'],
      [{ password: undefined }, 'account.password is required'],
      [{ email: 'nope' }, 'account.email "nope" is not a valid e-mail address'],
      [{ email: taken.email.toUpperCase() }, `account.email ${taken.email} is already used by an account`],
      [{ password: 'short' }, 'account.password must have at least 8 characters'],
      [{ password: 'x'.repeat(201) }, 'account.password must have at most 200 characters'],
      [{ isChild: 0 }, /^account\.isChild is 0: the API creates sub-accounts .*pigeon account create/],
      [{ isChild: 2 }, 'account.isChild "2" must be 0 or 1'],
      [{ unlimited: 'yes' }, 'account.unlimited "yes" must be 0 or 1'],
      [
        { type: 'person' },
        'account.type "person" must be one of: company, association, administration, private',
      ],
      [{ phone: '06 12' }, /^account\.phone "06 12" must be 6 to 15 digits/],
      [{ country_code: 'XX' }, /^account\.country_code "XX" must be an ISO 3166-1 alpha-2 country code/],
      [{ country_code: 'FRA' }, /^account\.country_code "FRA"/],
      [{ sender: 'AB' }, /^account\.sender "AB" must be 3 to 11 letters or digits/],
      [{ sender: 'Too long sender' }, /^account\.sender "Too long sender"/],
      [{ firstname: 'x'.repeat(101) }, 'account.firstname is longer than 100 characters'],
      [{ zip: '1'.repeat(21) }, 'account.zip is longer than 20 characters'],
      [{ description: 'x'.repeat(501) }, 'account.description is longer than 500 characters'],
    ];
    for (const [change, details] of cases) {
      const r = await call(h().app, 'POST', '/account', {
        token: parent.token,
        json: { account: { ...base, ...change } },
      });
      expect(r.httpCode).toBe(200);
      expect(r.body.status, JSON.stringify(change)).toBe(-7);
      if (typeof details === 'string') expect(r.body.details).toBe(details);
      else expect(r.body.details).toMatch(details);
    }
    const missing = await call(h().app, 'POST', '/account', { token: parent.token, json: {} });
    expect(missing.body).toMatchObject({ status: -7, details: 'account is required' });
    // Nothing was created by the refused requests.
    const list = await call(h().app, 'GET', '/sub-accounts', { token: parent.token });
    expect(list.body['sub-accounts']).toHaveLength(1);
  });

  it('a sub-account cannot create sub-accounts of its own (one level, as SMSFactor)', async () => {
    const parent = await h().account();
    const child = await h().account({ parentId: parent.id });
    const r = await call(h().app, 'POST', '/account', {
      token: child.token,
      json: { account: { email: uniqueEmail('grand'), password: 'long enough', isChild: 1 } },
    });
    expect(r.body).toMatchObject({
      status: -7,
      details: `account ${child.id} is a sub-account: a sub-account cannot have sub-accounts (one level, as SMSFactor)`,
    });
  });

  it("a token of A gets -5 for B's sub-accounts, for itself and for unknown ids, and never lists them", async () => {
    const a = await h().account();
    const b = await h().account();
    const bSub = await createSub(h(), b);
    const aChild = await h().account({ parentId: a.id });
    for (const id of [bSub.id, String(b.id), String(a.id), '999999999', 'abc']) {
      const r = await call(h().app, 'GET', `/sub-accounts/${id}`, { token: a.token });
      expect(r.body).toEqual({
        status: -5,
        message: 'Resource not found',
        details: `account "${id}" is not a sub-account of this account`,
      });
    }
    // A sub-account does not see its parent or its siblings as sub-accounts either.
    expect((await call(h().app, 'GET', `/sub-accounts/${a.id}`, { token: aChild.token })).body.status).toBe(
      -5,
    );
    const aList = await call(h().app, 'GET', '/sub-accounts', { token: a.token });
    expect(aList.body['sub-accounts'].map((s: { client_id: string }) => s.client_id)).toEqual([
      String(aChild.id),
    ]);
    const childList = await call(h().app, 'GET', '/sub-accounts', { token: aChild.token });
    expect(childList.body['sub-accounts']).toEqual([]);
  });
});
