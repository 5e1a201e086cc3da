import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

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

/** An XML answer's repeated element as an array, however many times it was repeated. */
const many = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined || value === '' ? [] : [value];

describeEachDialect('lists', (h) => {
  it('POST /list stores valid contacts and counts invalid and duplicate ones; GET /list/:id reads them back', async () => {
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
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      contacts: 2,
      invalid: 2,
      duplicates: 1,
    });
    const page = await call(h().app, 'GET', `/list/${r.body.id}`, { token: a.token });
    expect(page.body).toEqual({
      status: 1,
      message: 'OK',
      list: [
        {
          id: expect.stringMatching(/^[1-9][0-9]*$/),
          destination: fr(1),
          info1: 'Ann',
          info2: '',
          info3: '',
          info4: '',
        },
        {
          id: expect.stringMatching(/^[1-9][0-9]*$/),
          destination: fr(2),
          info1: 'Bob',
          info2: 'Paris',
          info3: '',
          info4: '',
        },
      ],
      name: 'Clients',
      contacts: 2,
      totalRecords: 2,
      totalDisplayRecords: 2,
    });
    expect(Number(page.body.list[0].id)).toBeLessThan(Number(page.body.list[1].id));
  });

  it('with listId, list_id or list (the Java SDK), POST /list adds to that list; numbers it holds are duplicates', async () => {
    const a = await h().account();
    const first = await createList(h(), a, [{ value: fr(1) }]);
    const added = await createList(h(), a, [{ value: fr(1) }, { value: fr(3) }], { listId: first.body.id });
    expect(added.body).toEqual({
      status: 1,
      message: 'OK',
      id: first.body.id,
      contacts: 1,
      duplicates: 1,
      invalid: 0,
    });
    const snake = await createList(h(), a, [{ value: fr(3) }, { value: fr(4) }], {
      list_id: Number(first.body.id),
    });
    expect(snake.body).toMatchObject({ status: 1, id: first.body.id, contacts: 1, duplicates: 1 });
    // The Java SDK's ContactList.addContacts sends the id as `list.list`.
    const java = await createList(h(), a, [{ value: fr(4) }, { value: fr(6) }], {
      list: Number(first.body.id),
    });
    expect(java.body).toMatchObject({ status: 1, id: first.body.id, contacts: 1, duplicates: 1 });
    const page = await call(h().app, 'GET', `/list/${first.body.id}`, { token: a.token });
    expect(page.body).toMatchObject({ contacts: 4, totalRecords: 4, totalDisplayRecords: 4 });
    const lists = await call(h().app, 'GET', '/lists', { token: a.token });
    expect(lists.body.lists).toHaveLength(1);
    const javaOther = await createList(h(), a, [{ value: fr(5) }], { listId: first.body.id, list: '999999' });
    expect(javaOther.body).toMatchObject({
      status: -7,
      details: `list.listId "${first.body.id}" and list.list "999999" name different lists`,
    });
    const both = await createList(h(), a, [{ value: fr(5) }], { listId: first.body.id, list_id: '999999' });
    expect(both.body).toMatchObject({
      status: -7,
      details: `list.listId "${first.body.id}" and list.list_id "999999" name different lists`,
    });
    const unknown = await createList(h(), a, [{ value: fr(5) }], { list_id: '999999' });
    expect(unknown.body).toMatchObject({ status: -5, details: 'list "999999" not found' });
  });

  it('a list created without a name is named after its creation date and time, in TIMEZONE', async () => {
    const a = await h().account();
    // 08:30:05 UTC is 10:30:05 in Paris in July (summer time).
    h().clock.set(Date.UTC(2026, 6, 14, 8, 30, 5));
    const unnamed = await createList(h(), a, [{ value: fr(1) }], {});
    const blank = await createList(h(), a, [], { name: '  ' });
    const lists = await call(h().app, 'GET', '/lists', { token: a.token });
    expect(lists.body.lists).toEqual([
      { id: unnamed.body.id, name: '2026-07-14 10:30:05', date: '2026-07-14 10:30:05', count: 1 },
      { id: blank.body.id, name: '2026-07-14 10:30:05', date: '2026-07-14 10:30:05', count: 0 },
    ]);
    const long = await createList(h(), a, [], { name: 'n'.repeat(101) });
    expect(long.body).toMatchObject({
      status: -7,
      details: expect.stringMatching(/^list\.name ".*" is longer than 100 characters$/),
    });
  });

  it('GET /list/:id pages contacts with start and length', async () => {
    const a = await h().account();
    const gsm = [...Array(7)].map((_, n) => ({ value: fr(n) }));
    const r = await createList(h(), a, gsm);
    const page = await call(h().app, 'GET', `/list/${r.body.id}?start=2&length=3`, { token: a.token });
    expect(page.body).toMatchObject({ contacts: 7, totalRecords: 7, totalDisplayRecords: 7 });
    expect(page.body.list.map((c: { destination: string }) => c.destination)).toEqual([fr(2), fr(3), fr(4)]);
    const bad = await call(h().app, 'GET', `/list/${r.body.id}?length=5000`, { token: a.token });
    expect(bad.body).toMatchObject({
      status: -7,
      details: 'length "5000" must be a whole number from 1 to 1000',
    });
  });

  it('GET /list/:id with search keeps the contacts whose number or info1…info4 holds it', async () => {
    const a = await h().account();
    const r = await createList(h(), a, [
      { value: fr(11), info1: 'Ann', info2: 'Paris' },
      { value: fr(12), info1: 'Bob', info3: '50% off' },
      { value: fr(13), info4: 'paris_nord' },
      { value: '32470123456', info1: 'Lea' },
    ]);
    const search = async (term: string, paging = '') => {
      const page = await call(
        h().app,
        'GET',
        `/list/${r.body.id}?search=${encodeURIComponent(term)}${paging}`,
        {
          token: a.token,
        },
      );
      expect(page.body.status, page.body.details).toBe(1);
      return page.body;
    };
    const paris = await search('PARIS');
    expect(paris.list.map((c: { destination: string }) => c.destination)).toEqual([fr(11), fr(13)]);
    expect(paris).toMatchObject({ contacts: 4, totalRecords: 4, totalDisplayRecords: 2 });
    expect((await search('3247')).list.map((c: { destination: string }) => c.destination)).toEqual([
      '32470123456',
    ]);
    // `%` and `_` are plain characters, not wildcards.
    expect((await search('50%')).list.map((c: { info1: string }) => c.info1)).toEqual(['Bob']);
    expect((await search('s_n')).list.map((c: { info4: string }) => c.info4)).toEqual(['paris_nord']);
    expect((await search('%')).totalDisplayRecords).toBe(1);
    expect((await search('nobody')).list).toEqual([]);
    const second = await search('336', '&start=1&length=1');
    expect(second).toMatchObject({ totalRecords: 4, totalDisplayRecords: 3 });
    expect(second.list.map((c: { destination: string }) => c.destination)).toEqual([fr(12)]);
    expect((await search('')).totalDisplayRecords).toBe(4);
    const long = await call(h().app, 'GET', `/list/${r.body.id}?search=${'x'.repeat(101)}`, {
      token: a.token,
    });
    expect(long.body).toMatchObject({
      status: -7,
      details: expect.stringMatching(/^search ".*" is longer than 100 characters$/),
    });
  });

  it('GET /lists shows the account lists with their sizes', async () => {
    const a = await h().account();
    h().clock.set(Date.UTC(2026, 0, 5, 9, 0, 0));
    const one = await createList(h(), a, [{ value: fr(1) }, { value: fr(2) }], { name: 'One' });
    const two = await createList(h(), a, [], { name: 'Two' });
    const r = await call(h().app, 'GET', '/lists', { token: a.token });
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      lists: [
        { id: one.body.id, name: 'One', date: '2026-01-05 10:00:00', count: 2 },
        { id: two.body.id, name: 'Two', date: '2026-01-05 10:00:00', count: 0 },
      ],
    });
  });

  it('POST /list, GET /list/:id and GET /lists answer in XML as in JSON', async () => {
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
    const added = await call(h().app, 'POST', '/list', {
      token: a.token,
      xml: `<list><list_id>${xml.body.id}</list_id><contacts><gsm><value>${fr(2)}</value></gsm></contacts></list>`,
    });
    expect(added.body).toMatchObject({ status: '1', id: xml.body.id, contacts: ['1'] });

    const page = await call(h().app, 'GET', `/list/${xml.body.id}`, {
      token: a.token,
      accept: 'application/xml',
    });
    expect(page.raw).toMatch(/<list><id>\d+<\/id><destination>\d+<\/destination><info1>Ann<\/info1>/);
    expect({ ...page.body, list: many(page.body.list), contacts: page.body.contacts[0] }).toEqual({
      status: '1',
      message: 'OK',
      list: [
        {
          id: expect.stringMatching(/^\d+$/),
          destination: fr(1),
          info1: 'Ann',
          info2: '',
          info3: '',
          info4: '',
        },
        {
          id: expect.stringMatching(/^\d+$/),
          destination: fr(2),
          info1: '',
          info2: '',
          info3: '',
          info4: '',
        },
      ],
      name: 'Clients',
      contacts: '2',
      totalRecords: '2',
      totalDisplayRecords: '2',
    });
    const lists = await call(h().app, 'GET', '/lists', { token: a.token, accept: 'application/xml' });
    const jsonLists = await call(h().app, 'GET', '/lists', { token: a.token });
    expect(lists.body.lists).toEqual(
      jsonLists.body.lists.map((l: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(l).map(([k, v]) => [k, String(v)])),
      ),
    );
    expect(lists.body.lists).toContainEqual({
      id: xml.body.id,
      name: 'Clients',
      date: expect.any(String),
      count: '2',
    });
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

  it('refuses gsmsmsid beside a list (POST /send only), in lists, recipients and XML, and sends nothing', async () => {
    const a = await h().account();
    const l = await createList(h(), a, [{ value: fr(1) }]);
    const bodies = [
      { json: { sms: { message: { text: 'x' }, lists: [{ value: l.body.id, gsmsmsid: 'g1' }] } } },
      {
        json: {
          sms: { message: { text: 'x' }, recipients: { gsm: [{ value: l.body.id, gsmsmsid: 'g1' }] } },
        },
      },
      {
        xml: `<sms><message><text>x</text></message><recipients><gsm gsmsmsid="g1">${l.body.id}</gsm></recipients></sms>`,
      },
    ];
    for (const body of bodies) {
      for (const path of ['/send/lists', '/send/lists/simulate']) {
        const r = await call(h().app, 'POST', path, { token: a.token, accept: 'application/json', ...body });
        expect(r.body).toMatchObject({
          status: -7,
          details: expect.stringMatching(
            /^gsmsmsid is not taken on \/send\/lists \(list \d+\): it applies to POST \/send/,
          ),
        });
      }
    }
    const stored = h().deps.store.db.selectFrom('campaigns').select('id').where('account_id', '=', a.id);
    expect(await stored.execute()).toEqual([]);
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
    expect(stillOne.body).toMatchObject({ status: 1, contacts: 1, totalRecords: 1 });
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(1000);
  });
});
