import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from './helpers/harness.ts';

const fr = (n: number) => `336${String(22345600 + n).padStart(8, '0')}`;

async function createList(
  h: Harness,
  a: TestAccount,
  gsm: Record<string, string>[],
  extra: Record<string, unknown> = { name: 'Clients' },
) {
  return call(h.app, 'POST', '/list', { token: a.token, json: { list: { ...extra, contacts: { gsm } } } });
}

async function messagesOf(h: Harness, ticket: string) {
  return h.deps.store.db
    .selectFrom('messages')
    .selectAll()
    .where('campaign_id', '=', Number(ticket))
    .orderBy('seq')
    .execute();
}

describeEachDialect('lists', (h) => {
  it('POST /list stores valid contacts and counts invalid and duplicate ones', async () => {
    const a = await h().account();
    const r = await createList(h(), a, [
      { value: fr(1), info1: 'Ann' },
      { value: `+${fr(1)}` },
      { value: fr(2), info1: 'Bob', info2: 'Paris' },
      { value: 'abc' },
      { value: '33712345678' },
    ]);
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      id: expect.any(String),
      contacts: 2,
      invalid: 2,
      duplicates: 1,
    });
    const page = await call(h().app, 'GET', `/list/${r.body.id}`, { token: a.token });
    expect(page.body).toMatchObject({ status: 1, list_id: r.body.id, name: 'Clients', total: 2 });
    expect(page.body.contacts).toEqual([
      { contact_id: expect.any(String), value: fr(1), info1: 'Ann', info2: '', info3: '', info4: '' },
      { contact_id: expect.any(String), value: fr(2), info1: 'Bob', info2: 'Paris', info3: '', info4: '' },
    ]);
  });

  it('with listId, POST /list adds to that list; numbers it holds are duplicates', async () => {
    const a = await h().account();
    const first = await createList(h(), a, [{ value: fr(1) }]);
    const added = await createList(h(), a, [{ value: fr(1) }, { value: fr(3) }], { listId: first.body.id });
    expect(added.body).toMatchObject({
      status: 1,
      id: first.body.id,
      contacts: 1,
      duplicates: 1,
      invalid: 0,
    });
    const page = await call(h().app, 'GET', `/list/${first.body.id}`, { token: a.token });
    expect(page.body.total).toBe(2);
    const missingName = await createList(h(), a, [{ value: fr(1) }], {});
    expect(missingName.body).toMatchObject({ status: -7, details: 'list.name is required to create a list' });
  });

  it('GET /list/:id pages contacts with start and length', async () => {
    const a = await h().account();
    const gsm = [...Array(7)].map((_, n) => ({ value: fr(n) }));
    const r = await createList(h(), a, gsm);
    const page = await call(h().app, 'GET', `/list/${r.body.id}?start=2&length=3`, { token: a.token });
    expect(page.body.total).toBe(7);
    expect(page.body.contacts.map((c: { value: string }) => c.value)).toEqual([fr(2), fr(3), fr(4)]);
    const bad = await call(h().app, 'GET', `/list/${r.body.id}?length=5000`, { token: a.token });
    expect(bad.body.status).toBe(-7);
  });

  it('GET /lists shows the account lists with their sizes', async () => {
    const a = await h().account();
    const one = await createList(h(), a, [{ value: fr(1) }, { value: fr(2) }], { name: 'One' });
    const two = await createList(h(), a, [], { name: 'Two' });
    const r = await call(h().app, 'GET', '/lists', { token: a.token });
    expect(r.body.lists).toEqual([
      { list_id: one.body.id, name: 'One', created_at: expect.any(String), count: 2 },
      { list_id: two.body.id, name: 'Two', created_at: expect.any(String), count: 0 },
    ]);
  });

  it('POST /list reads XML and answers in XML like JSON', async () => {
    const a = await h().account();
    const json = await createList(h(), a, [{ value: fr(1), info1: 'Ann' }, { value: 'x' }]);
    const xml = await call(h().app, 'POST', '/list', {
      token: a.token,
      xml: `<list><name>Clients</name><contacts><gsm><value>${fr(1)}</value><info1>Ann</info1></gsm><gsm>x</gsm></contacts></list>`,
    });
    expect(xml.raw).toMatch(/^<\?xml[^>]*\?><response><status>1<\/status>/);
    // The harness reads every <contacts> in XML answers as an array.
    expect({ ...xml.body, id: undefined, contacts: xml.body.contacts[0] }).toEqual({
      ...Object.fromEntries(Object.entries(json.body).map(([k, v]) => [k, String(v)])),
      id: undefined,
    });
    const page = await call(h().app, 'GET', `/list/${xml.body.id}`, { token: a.token });
    expect(page.body.contacts[0]).toMatchObject({ value: fr(1), info1: 'Ann' });
  });
});

describeEachDialect('send to lists', (h) => {
  it('sends to every contact of the lists, with [info1]…[info4] filled, duplicates across lists counted', async () => {
    const a = await h().account();
    const l1 = await createList(h(), a, [
      { value: fr(1), info1: 'Ann', info2: 'Paris' },
      { value: fr(2), info1: 'Bob' },
    ]);
    const l2 = await createList(h(), a, [{ value: fr(2), info1: 'Bobby' }, { value: fr(3) }]);
    await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: fr(3) }] } } },
    });
    const r = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Hi [info1] of [info2] <-short->', links: ['https://x.example'] },
          lists: [{ value: l1.body.id }, { value: Number(l2.body.id) }],
        },
      },
    });
    expect(r.body).toMatchObject({ status: 1, total: 4, sent: 2, duplicated: 1, blacklisted: 1, cost: 2 });
    const messages = await messagesOf(h(), r.body.ticket);
    expect(messages.map((m) => m.recipient)).toEqual([fr(1), fr(2)]);
    expect(messages[0].text).toMatch(/^Hi Ann of Paris http/);
    expect(messages[1].text).toMatch(/^Hi Bob of {2}http/);
    expect(messages.every((m) => m.contact_id !== null && m.gsmsmsid === null)).toBe(true);
  });

  it('accepts the seed reading: sms.recipients.gsm values are list ids; and XML <lists><value>', async () => {
    const a = await h().account();
    const l = await createList(h(), a, [{ value: fr(1) }]);
    const seed = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ value: l.body.id }] } } },
    });
    expect(seed.body).toMatchObject({ status: 1, sent: 1 });
    const xml = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      xml: `<sms><message><text>x</text><pushtype>alert</pushtype></message><lists><value>${l.body.id}</value></lists></sms>`,
    });
    expect(xml.body).toMatchObject({ status: '1', sent: '1', cost: '1' });
    const simulated = await call(h().app, 'POST', '/send/lists/simulate', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, lists: [{ value: l.body.id }] } },
    });
    expect(simulated.body).toMatchObject({ status: 1, sent: 1 });
    expect(simulated.body.ticket).toBeUndefined();
  });

  it('POST /send/lists answers the same in XML as in JSON', async () => {
    const a = await h().account();
    const l = await createList(h(), a, [{ value: fr(1), info1: 'Ann' }, { value: fr(2) }]);
    const json = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Hi [info1] <-short->', links: ['https://x.example'] },
          lists: [{ value: l.body.id }],
        },
      },
    });
    const xml = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      xml:
        '<sms><message><text>Hi [info1] &lt;-short-&gt;</text><links>https://x.example</links></message>' +
        `<lists><value>${l.body.id}</value></lists></sms>`,
    });
    expect(xml.raw).toMatch(/^<\?xml[^>]*\?><response><status>1<\/status>/);
    const { ticket: _j, credits: jsonCredits, ...jsonRest } = json.body;
    const { ticket: _x, credits: xmlCredits, ...xmlRest } = xml.body;
    expect(xmlRest).toEqual(Object.fromEntries(Object.entries(jsonRest).map(([k, v]) => [k, String(v)])));
    expect(Number(xmlCredits)).toBe(jsonCredits - json.body.cost);
    const texts = (await messagesOf(h(), xml.body.ticket)).map((m) => m.text);
    expect(texts[0]).toMatch(/^Hi Ann http/);
  });

  it('an unknown list is -5; no list at all is -7', async () => {
    const a = await h().account();
    const r = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, lists: [{ value: '999999' }] } },
    });
    expect(r.body).toMatchObject({ status: -5, details: 'list 999999 not found' });
    const none = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: { sms: { message: { text: 'x' } } },
    });
    expect(none.body.status).toBe(-7);
  });
});

describeEachDialect('lists: tenant isolation', (h) => {
  it("account A cannot send to, read, or add to account B's list", async () => {
    const a = await h().account();
    const b = await h().account();
    const bList = await createList(h(), b, [{ value: fr(1) }]);
    const sendAttempt = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, lists: [{ value: bList.body.id }] } },
    });
    expect(sendAttempt.body).toMatchObject({ status: -5 });
    expect((await call(h().app, 'GET', `/list/${bList.body.id}`, { token: a.token })).body.status).toBe(-5);
    expect((await createList(h(), a, [{ value: fr(2) }], { listId: bList.body.id })).body.status).toBe(-5);
    expect((await call(h().app, 'GET', '/lists', { token: a.token })).body.lists).toEqual([]);
    const stillOne = await call(h().app, 'GET', `/list/${bList.body.id}`, { token: b.token });
    expect(stillOne.body.total).toBe(1);
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(1000);
  });
});
