// Managing lists after they are made (deleting them, deduplicating them, editing and deleting contacts,
// clearing their NPAI numbers) and the account's blacklist and NPAI list (reading, adding with contact
// fields, deleting entries, STOP replies), in SMSFactor's shapes, with tenant isolation for every route.
import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

const fr = (n: number) => `336${String(31000000 + n).padStart(8, '0')}`;
const digits = /^[1-9][0-9]*$/;

/** An XML answer's repeated element as an array, however many times it was repeated. */
const many = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined || value === '' ? [] : [value];

async function createList(h: Harness, a: TestAccount, gsm: Record<string, string>[], name = 'Clients') {
  const r = await call(h.app, 'POST', '/list', {
    token: a.token,
    json: { list: { name, contacts: { gsm } } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.id as string;
}

interface Contact {
  id: string;
  destination: string;
  info1: string;
  info2: string;
  info3: string;
  info4: string;
}

async function contactsOf(h: Harness, a: TestAccount, listId: string): Promise<Contact[]> {
  const r = await call(h.app, 'GET', `/list/${listId}?length=1000`, { token: a.token });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body.list;
}

const destinations = (contacts: Contact[]) => contacts.map((c) => c.destination);

async function addNumbers(
  h: Harness,
  a: TestAccount,
  list: 'blacklist' | 'npai',
  gsm: Record<string, string>[],
) {
  const r = await call(h.app, 'POST', `/${list}`, {
    token: a.token,
    json: { [list]: { contacts: { gsm } } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body;
}

async function simulate(h: Harness, a: TestAccount, number: string) {
  const r = await call(h.app, 'POST', '/send/simulate', {
    token: a.token,
    json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ value: number }] } } },
  });
  expect(r.body.status, r.body.details).toBe(1);
  return r.body;
}

describeEachDialect('lists: deleting, deduplicating, clearing NPAI', (h) => {
  it('DELETE /list/:id deletes the list and its contacts; a campaign sent from it keeps its messages', async () => {
    const a = await h().account();
    const listId = await createList(h(), a, [{ value: fr(1), info1: 'Ann' }, { value: fr(2) }]);
    const kept = await createList(h(), a, [{ value: fr(1) }], 'Kept');
    const sent = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: { sms: { message: { text: 'Hi [info1]' }, lists: [{ value: listId }] } },
    });
    expect(sent.body).toMatchObject({ status: 1, sent: 2 });

    const r = await call(h().app, 'DELETE', `/list/${listId}`, { token: a.token });
    expect(r.body).toEqual({ status: 1, message: 'OK' });
    expect((await call(h().app, 'GET', `/list/${listId}`, { token: a.token })).body).toMatchObject({
      status: -5,
      details: `list "${listId}" not found`,
    });
    const lists = await call(h().app, 'GET', '/lists', { token: a.token });
    expect(lists.body.lists.map((l: { id: string }) => l.id)).toEqual([kept]);
    const db = h().deps.store.db;
    const contacts = await db
      .selectFrom('contacts')
      .select('id')
      .where('list_id', '=', Number(listId))
      .execute();
    expect(contacts).toEqual([]);
    const messages = await db
      .selectFrom('messages')
      .select(['recipient', 'text'])
      .where('campaign_id', '=', Number(sent.body.ticket))
      .orderBy('seq')
      .execute();
    expect(messages).toEqual([
      { recipient: fr(1), text: 'Hi Ann' },
      { recipient: fr(2), text: 'Hi ' },
    ]);
    expect(
      (await call(h().app, 'GET', `/campaign/${sent.body.ticket}`, { token: a.token })).body.status,
    ).toBe(1);
    expect(destinations(await contactsOf(h(), a, kept))).toEqual([fr(1)]);
    // Gone is gone: deleting it again, or sending to it, does not find it.
    expect((await call(h().app, 'DELETE', `/list/${listId}`, { token: a.token })).body.status).toBe(-5);
    const again = await call(h().app, 'POST', '/send/lists', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, lists: [{ value: listId }] } },
    });
    expect(again.body.status).toBe(-5);
  });

  it('PUT /list/deduplicate/:id removes the contacts whose number appears earlier in the list; the lowest id stays', async () => {
    const a = await h().account();
    const listId = await createList(h(), a, [
      { value: fr(11), info1: 'first' },
      { value: fr(12), info1: 'b' },
      { value: fr(13), info1: 'c' },
      { value: fr(14), info1: 'd' },
      { value: fr(15), info1: 'e' },
    ]);
    const other = await createList(h(), a, [{ value: fr(11) }, { value: fr(12) }]);
    const before = await contactsOf(h(), a, listId);
    // Edits make duplicates: c and d take the first contact's number, e takes b's.
    for (const [i, to] of [
      [2, fr(11)],
      [3, fr(11)],
      [4, fr(12)],
    ] as const) {
      const r = await call(h().app, 'PUT', `/list/contact/${before[i].id}`, {
        token: a.token,
        json: { contact: { destination: to } },
      });
      expect(r.body).toEqual({ status: 1, message: 'OK' });
    }
    const r = await call(h().app, 'PUT', `/list/deduplicate/${listId}`, { token: a.token });
    expect(r.body).toEqual({ status: 1, message: 'OK', removed: 3 });
    const after = await contactsOf(h(), a, listId);
    expect(after.map((c) => [c.id, c.destination, c.info1])).toEqual([
      [before[0].id, fr(11), 'first'],
      [before[1].id, fr(12), 'b'],
    ]);
    expect((await call(h().app, 'PUT', `/list/deduplicate/${listId}`, { token: a.token })).body).toEqual({
      status: 1,
      message: 'OK',
      removed: 0,
    });
    // Another list holding the same numbers is not touched.
    expect(destinations(await contactsOf(h(), a, other))).toEqual([fr(11), fr(12)]);
    const xml = await call(h().app, 'PUT', `/list/deduplicate/${listId}`, {
      token: a.token,
      accept: 'application/xml',
    });
    expect(xml.body).toEqual({ status: '1', message: 'OK', removed: '0' });
  });

  it('PUT /list/:id/npai/clear removes the contacts whose number is on the account NPAI list', async () => {
    const a = await h().account();
    const b = await h().account();
    const listId = await createList(h(), a, [
      { value: fr(21) },
      { value: fr(22) },
      { value: fr(23) },
      { value: fr(24) },
    ]);
    await addNumbers(h(), a, 'npai', [{ value: fr(22) }, { value: fr(24) }, { value: fr(29) }]);
    // Another account's NPAI list says nothing about this account's lists.
    await addNumbers(h(), b, 'npai', [{ value: fr(21) }]);
    const r = await call(h().app, 'PUT', `/list/${listId}/npai/clear`, { token: a.token });
    expect(r.body).toEqual({ status: 1, message: 'OK', removed: 2 });
    expect(destinations(await contactsOf(h(), a, listId))).toEqual([fr(21), fr(23)]);
    expect((await call(h().app, 'PUT', `/list/${listId}/npai/clear`, { token: a.token })).body.removed).toBe(
      0,
    );
    // The NPAI list itself is unchanged.
    expect((await call(h().app, 'GET', '/npai', { token: a.token })).body.totalRecords).toBe(3);
  });
});

describeEachDialect('lists: contacts', (h) => {
  it('PUT /list/contact/:id changes the fields given, wrapped in contact, flat, or in XML; the others stay', async () => {
    const a = await h().account();
    const listId = await createList(h(), a, [
      { value: fr(31), info1: 'Ann', info2: 'Paris', info3: 'x', info4: 'y' },
    ]);
    const [contact] = await contactsOf(h(), a, listId);
    const put = (json: unknown) =>
      call(h().app, 'PUT', `/list/contact/${contact.id}`, { token: a.token, json });

    expect((await put({ contact: { info2: 'Lyon' } })).body).toEqual({ status: 1, message: 'OK' });
    expect(await contactsOf(h(), a, listId)).toEqual([{ ...contact, info2: 'Lyon' }]);

    expect((await put({ destination: `+${fr(32)}`, info4: '' })).body).toEqual({ status: 1, message: 'OK' });
    expect(await contactsOf(h(), a, listId)).toEqual([
      { ...contact, destination: fr(32), info2: 'Lyon', info4: '' },
    ]);

    const xml = await call(h().app, 'PUT', `/list/contact/${contact.id}`, {
      token: a.token,
      xml: `<contact><destination>${fr(33)}</destination><info1>Anne &amp; Co</info1></contact>`,
    });
    expect(xml.body).toEqual({ status: '1', message: 'OK' });
    expect(await contactsOf(h(), a, listId)).toEqual([
      { ...contact, destination: fr(33), info1: 'Anne & Co', info2: 'Lyon', info4: '' },
    ]);

    // Nothing to change is not an error, and changes nothing.
    expect((await put({ contact: {} })).body).toEqual({ status: 1, message: 'OK' });
    expect((await call(h().app, 'PUT', `/list/contact/${contact.id}`, { token: a.token })).body).toEqual({
      status: 1,
      message: 'OK',
    });
    expect(destinations(await contactsOf(h(), a, listId))).toEqual([fr(33)]);
  });

  it('PUT /list/contact/:id validates a new destination like list contacts, and bounds the info fields', async () => {
    const a = await h().account();
    const listId = await createList(h(), a, [{ value: fr(41), info1: 'Ann' }]);
    const [contact] = await contactsOf(h(), a, listId);
    const put = (json: unknown) =>
      call(h().app, 'PUT', `/list/contact/${contact.id}`, { token: a.token, json });
    for (const bad of ['abc', '33712345678', '', '0612345678']) {
      expect((await put({ contact: { destination: bad, info1: 'changed' } })).body).toEqual({
        status: -7,
        message: 'Data error',
        details: `contact.destination "${bad}" is not a valid number (digits with the country code first, e.g. 33612345678)`,
      });
    }
    expect((await put({ info3: 'z'.repeat(256) })).body).toMatchObject({
      status: -7,
      details: 'contact.info3 is longer than 255 characters',
    });
    expect((await put({ contact: { destination: { nested: 1 } } })).body).toMatchObject({
      status: -7,
      details: 'contact.destination must be a string',
    });
    expect(await contactsOf(h(), a, listId)).toEqual([contact]);
  });

  it('DELETE /list/contact/:id deletes one contact; again it is -5', async () => {
    const a = await h().account();
    const listId = await createList(h(), a, [{ value: fr(51) }, { value: fr(52) }]);
    const [first, second] = await contactsOf(h(), a, listId);
    const r = await call(h().app, 'DELETE', `/list/contact/${first.id}`, { token: a.token });
    expect(r.body).toEqual({ status: 1, message: 'OK' });
    expect(await contactsOf(h(), a, listId)).toEqual([second]);
    expect(
      (await call(h().app, 'DELETE', `/list/contact/${first.id}`, { token: a.token })).body,
    ).toMatchObject({
      status: -5,
      details: `contact "${first.id}" not found`,
    });
    // SDKs send DELETE with an empty JSON body or an empty form.
    const empty = await call(h().app, 'DELETE', `/list/contact/${second.id}`, {
      token: a.token,
      body: '',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(empty.body).toEqual({ status: 1, message: 'OK' });
    expect(await contactsOf(h(), a, listId)).toEqual([]);
  });
});

describeEachDialect('blacklist and NPAI list', (h) => {
  it('GET /blacklist and /npai answer list, totalRecords, totalDisplayRecords; entries keep info1…info4', async () => {
    const a = await h().account();
    h().clock.set(Date.UTC(2026, 0, 5, 9, 0, 0));
    const added = await addNumbers(h(), a, 'blacklist', [
      { value: fr(61), info1: 'Isaac', info2: 'Asimov', info3: '1919', info4: 'Petrovichi' },
      { value: `+${fr(62)}` },
      { value: fr(61), info1: 'again' },
      { value: 'abc' },
    ]);
    expect(added).toEqual({ status: 1, message: 'OK', added_contacts: 2, invalid: 1 });
    h().clock.advance(61_000);
    expect(await addNumbers(h(), a, 'blacklist', [{ value: fr(62) }, { value: fr(63) }])).toMatchObject({
      added_contacts: 1,
    });
    const r = await call(h().app, 'GET', '/blacklist', { token: a.token });
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      list: [
        {
          id: expect.stringMatching(digits),
          destination: fr(61),
          info1: 'Isaac',
          info2: 'Asimov',
          info3: '1919',
          info4: 'Petrovichi',
          date: '2026-01-05 10:00:00',
          campaign_id: null,
        },
        {
          id: expect.stringMatching(digits),
          destination: fr(62),
          info1: '',
          info2: '',
          info3: '',
          info4: '',
          date: '2026-01-05 10:00:00',
          campaign_id: null,
        },
        {
          id: expect.stringMatching(digits),
          destination: fr(63),
          info1: '',
          info2: '',
          info3: '',
          info4: '',
          date: '2026-01-05 10:01:01',
          campaign_id: null,
        },
      ],
      totalRecords: 3,
      totalDisplayRecords: 3,
    });
    const paged = await call(h().app, 'GET', '/blacklist?start=1&length=1', { token: a.token });
    expect(paged.body).toMatchObject({ totalRecords: 3, totalDisplayRecords: 3 });
    expect(paged.body.list.map((e: Contact) => e.destination)).toEqual([fr(62)]);
    expect((await call(h().app, 'GET', '/blacklist?length=0', { token: a.token })).body.status).toBe(-7);
    expect((await call(h().app, 'GET', '/npai', { token: a.token })).body).toEqual({
      status: 1,
      message: 'OK',
      list: [],
      totalRecords: 0,
      totalDisplayRecords: 0,
    });
    const long = await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: fr(64), info2: 'q'.repeat(256) }] } } },
    });
    expect(long.body).toMatchObject({
      status: -7,
      details: `blacklist.contacts.gsm: info2 of ${fr(64)} is longer than 255 characters`,
    });
  });

  it('POST and GET /npai in XML (root <npai>) answer as in JSON', async () => {
    const a = await h().account();
    const xml = await call(h().app, 'POST', '/npai', {
      token: a.token,
      xml: `<npai><contacts><gsm><value>${fr(71)}</value><info1>Grace</info1></gsm><gsm>${fr(72)}</gsm></contacts></npai>`,
    });
    expect(xml.body).toEqual({ status: '1', message: 'OK', added_contacts: '2', invalid: '0' });
    const json = await call(h().app, 'GET', '/npai', { token: a.token });
    const read = await call(h().app, 'GET', '/npai', { token: a.token, accept: 'application/xml' });
    expect(read.raw).toMatch(/<list><id>\d+<\/id><destination>\d+<\/destination><info1>Grace<\/info1>/);
    expect({ ...read.body, list: many(read.body.list) }).toEqual({
      status: '1',
      message: 'OK',
      list: json.body.list.map((e: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v === null ? '' : String(v)])),
      ),
      totalRecords: '2',
      totalDisplayRecords: '2',
    });
    expect(json.body.list.map((e: Contact) => [e.destination, e.info1])).toEqual([
      [fr(71), 'Grace'],
      [fr(72), ''],
    ]);
  });

  it("POST /npai takes SMSFactor's own XML example (root <list>), and the list root in JSON on /blacklist", async () => {
    const a = await h().account();
    const xml = await call(h().app, 'POST', '/npai', {
      token: a.token,
      xml: `<?xml version="1.0" encoding="UTF-8"?><list><contacts><gsm><value>${fr(73)}</value><info1>Hedy</info1></gsm><gsm>${fr(74)}</gsm></contacts></list>`,
    });
    expect(xml.body).toEqual({ status: '1', message: 'OK', added_contacts: '2', invalid: '0' });
    const npai = await call(h().app, 'GET', '/npai', { token: a.token });
    expect(npai.body.list.map((e: Contact) => [e.destination, e.info1])).toEqual([
      [fr(73), 'Hedy'],
      [fr(74), ''],
    ]);
    const json = await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { list: { contacts: { gsm: [{ value: fr(75) }] } } },
    });
    expect(json.body).toMatchObject({ status: 1, added_contacts: 1 });
    const neither = await call(h().app, 'POST', '/npai', { token: a.token, json: { lists: {} } });
    expect(neither.body).toMatchObject({ status: -7 });
  });

  it('DELETE /blacklist/contact/:id and /npai/contact/:id take a number off: it can be sent to again', async () => {
    const a = await h().account();
    await addNumbers(h(), a, 'blacklist', [{ value: fr(81) }]);
    await addNumbers(h(), a, 'npai', [{ value: fr(82) }]);
    expect(await simulate(h(), a, fr(81))).toMatchObject({ blacklisted: 1, sent: 0 });
    expect(await simulate(h(), a, fr(82))).toMatchObject({ npai: 1, sent: 0 });

    for (const [list, number, counter] of [
      ['blacklist', fr(81), 'blacklisted'],
      ['npai', fr(82), 'npai'],
    ] as const) {
      const [entry] = (await call(h().app, 'GET', `/${list}`, { token: a.token })).body.list;
      expect(entry.destination).toBe(number);
      const r = await call(h().app, 'DELETE', `/${list}/contact/${entry.id}`, { token: a.token });
      expect(r.body).toEqual({ status: 1, message: 'OK' });
      expect((await call(h().app, 'GET', `/${list}`, { token: a.token })).body).toMatchObject({
        list: [],
        totalRecords: 0,
      });
      expect(await simulate(h(), a, number)).toMatchObject({ [counter]: 0, sent: 1 });
      expect(
        (await call(h().app, 'DELETE', `/${list}/contact/${entry.id}`, { token: a.token })).body,
      ).toMatchObject({ status: -5, details: `${list} entry "${entry.id}" not found` });
    }
    const sent = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ value: fr(81) }, { value: fr(82) }] } } },
    });
    expect(sent.body).toMatchObject({ status: 1, sent: 2, blacklisted: 0, npai: 0 });
    // Added again, the number is filtered again.
    await addNumbers(h(), a, 'blacklist', [{ value: fr(81) }]);
    expect(await simulate(h(), a, fr(81))).toMatchObject({ blacklisted: 1, sent: 0 });
  });

  it('a STOP reply puts the number on the blacklist with the campaign it answered', async () => {
    const a = await h().account();
    const sent = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: {
        sms: { message: { text: 'Promo' }, recipients: { gsm: [{ value: fr(91) }, { value: fr(92) }] } },
      },
    });
    expect(sent.body).toMatchObject({ status: 1, sent: 2 });
    await addNumbers(h(), a, 'blacklist', [{ value: fr(93), info1: 'by hand' }]);
    const reply = await h().deps.services.replies.recordInbound({ from: fr(92), to: '36180', text: 'STOP' });
    expect(reply).toMatchObject({ type: 'STOP' });
    const r = await call(h().app, 'GET', '/blacklist', { token: a.token });
    expect(r.body.list).toEqual([
      expect.objectContaining({ destination: fr(93), info1: 'by hand', campaign_id: null }),
      expect.objectContaining({ destination: fr(92), info1: '', campaign_id: sent.body.ticket }),
    ]);
    const xml = await call(h().app, 'GET', '/blacklist', { token: a.token, accept: 'application/xml' });
    expect(many(xml.body.list).map((e) => (e as { campaign_id: string }).campaign_id)).toEqual([
      '',
      sent.body.ticket,
    ]);
    expect(await simulate(h(), a, fr(92))).toMatchObject({ blacklisted: 1, sent: 0 });
  });
});

describeEachDialect('lists, blacklist, NPAI: tenant isolation', (h) => {
  it("account B's token gets -5 for every one of account A's lists, contacts, blacklist and NPAI entries", async () => {
    const a = await h().account();
    const b = await h().account();
    const listId = await createList(h(), a, [{ value: fr(101) }, { value: fr(102) }]);
    const [contact] = await contactsOf(h(), a, listId);
    await addNumbers(h(), a, 'blacklist', [{ value: fr(103) }]);
    await addNumbers(h(), a, 'npai', [{ value: fr(101) }]);
    const blEntry = (await call(h().app, 'GET', '/blacklist', { token: a.token })).body.list[0];
    const npaiEntry = (await call(h().app, 'GET', '/npai', { token: a.token })).body.list[0];

    const attempts: [string, string, unknown?][] = [
      ['GET', `/list/${listId}`],
      ['DELETE', `/list/${listId}`],
      ['PUT', `/list/deduplicate/${listId}`],
      ['PUT', `/list/${listId}/npai/clear`],
      ['POST', '/list', { list: { listId, contacts: { gsm: [{ value: fr(104) }] } } }],
      ['POST', '/list', { list: { list_id: listId, contacts: { gsm: [{ value: fr(104) }] } } }],
      ['PUT', `/list/contact/${contact.id}`, { contact: { info1: 'stolen' } }],
      ['DELETE', `/list/contact/${contact.id}`],
      ['DELETE', `/blacklist/contact/${blEntry.id}`],
      ['DELETE', `/npai/contact/${npaiEntry.id}`],
    ];
    for (const [method, url, json] of attempts) {
      const r = await call(h().app, method, url, { token: b.token, json });
      expect(r.body.status, `${method} ${url}`).toBe(-5);
      expect(r.httpCode).toBe(200);
    }
    // B's own reads show none of A's rows.
    expect((await call(h().app, 'GET', '/lists', { token: b.token })).body.lists).toEqual([]);
    expect((await call(h().app, 'GET', '/blacklist', { token: b.token })).body).toMatchObject({
      list: [],
      totalRecords: 0,
    });
    expect((await call(h().app, 'GET', '/npai', { token: b.token })).body.totalRecords).toBe(0);
    // And A's rows are untouched.
    expect(await contactsOf(h(), a, listId)).toEqual([
      contact,
      expect.objectContaining({ destination: fr(102) }),
    ]);
    expect((await call(h().app, 'GET', '/blacklist', { token: a.token })).body.list).toEqual([blEntry]);
    expect((await call(h().app, 'GET', '/npai', { token: a.token })).body.list).toEqual([npaiEntry]);
  });

  it('an id that is not a positive integer is -5 on every id route, never a 500', async () => {
    const a = await h().account();
    for (const id of ['0', '-1', 'abc', '1.5', '99999999999999999999', '%20', '007']) {
      for (const [method, url] of [
        ['GET', `/list/${id}`],
        ['DELETE', `/list/${id}`],
        ['PUT', `/list/deduplicate/${id}`],
        ['PUT', `/list/${id}/npai/clear`],
        ['PUT', `/list/contact/${id}`],
        ['DELETE', `/list/contact/${id}`],
        ['DELETE', `/blacklist/contact/${id}`],
        ['DELETE', `/npai/contact/${id}`],
      ]) {
        const r = await call(h().app, method, url, { token: a.token });
        expect(r.httpCode, `${method} ${url}`).toBe(200);
        expect(r.body.status, `${method} ${url}`).toBe(-5);
      }
    }
    const r = await call(h().app, 'POST', '/list', {
      token: a.token,
      json: { list: { listId: 'abc', contacts: { gsm: [{ value: fr(111) }] } } },
    });
    expect(r.body).toMatchObject({ status: -5, details: 'list "abc" not found' });
  });
});
