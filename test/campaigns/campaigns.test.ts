import { expect, it } from 'vitest';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';

const fr = (n: number) => `336${String(12345600 + n).padStart(8, '0')}`;

interface SendOptions {
  text?: string;
  pushtype?: string;
  links?: string[];
  delay?: string;
  sender?: string;
  unicode?: unknown;
  gsm?: { value: string; gsmsmsid?: string }[];
}

function sendBody(o: SendOptions = {}) {
  const message: Record<string, unknown> = { text: o.text ?? 'Hello', pushtype: o.pushtype ?? 'alert' };
  for (const key of ['links', 'delay', 'sender', 'unicode'] as const)
    if (o[key] !== undefined) message[key] = o[key];
  return { sms: { message, recipients: { gsm: o.gsm ?? [{ value: fr(1) }] } } };
}

const send = (h: Harness, a: TestAccount, o: SendOptions = {}, path = '/send') =>
  call(h.app, 'POST', path, { token: a.token, json: sendBody(o) });

async function messagesOf(h: Harness, ticket: string) {
  return h.deps.store.db
    .selectFrom('messages')
    .selectAll()
    .where('campaign_id', '=', Number(ticket))
    .orderBy('seq')
    .execute();
}

async function expectDataError(r: { body: { status: number; details: string } }, details: RegExp) {
  expect(r.body.status).toBe(-7);
  expect(r.body.details).toMatch(details);
}

describeEachDialect('send: validation', (h) => {
  it('a missing text is -7 naming sms.message.text', async () => {
    const a = await h().account();
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { pushtype: 'alert' }, recipients: { gsm: [{ value: fr(1) }] } } },
    });
    await expectDataError(r, /sms\.message\.text is required/);
    await expectDataError(await send(h(), a, { text: '   ' }), /sms\.message\.text must not be empty/);
  });

  it('missing or empty recipients are -7', async () => {
    const a = await h().account();
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'x' } } },
    });
    await expectDataError(r, /sms\.recipients is required/);
    await expectDataError(await send(h(), a, { gsm: [] }), /sms\.recipients\.gsm is empty/);
    const noValue = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ gsmsmsid: '1' }] } } },
    });
    await expectDataError(noValue, /sms\.recipients\.gsm\.0\.value is required/);
  });

  it('a pushtype other than alert or marketing is -7; absent means alert', async () => {
    const a = await h().account();
    await expectDataError(
      await send(h(), a, { pushtype: 'promo' }),
      /pushtype "promo" must be "alert" or "marketing"/,
    );
    const r = await call(h().app, 'POST', '/send/simulate', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ value: fr(1) }] } } },
    });
    expect(r.body).toMatchObject({ status: 1, cost: 1 });
  });

  it('as many links as <-short-> markers, or -7', async () => {
    const a = await h().account();
    await expectDataError(
      await send(h(), a, { text: 'a <-short-> b <-short->', links: ['https://a.example'] }),
      /has 2 <-short-> markers but 1 link was given/,
    );
    await expectDataError(
      await send(h(), a, { text: 'no marker', links: ['https://a.example'] }),
      /has 0 <-short-> markers but 1 link was given/,
    );
    await expectDataError(
      await send(h(), a, { text: 'a <-short->' }),
      /has 1 <-short-> marker but 0 links were given/,
    );
  });

  it('a link must be an http or https URL, or -7', async () => {
    const a = await h().account();
    await expectDataError(
      await send(h(), a, { text: '<-short->', links: ['ftp://files.example/x'] }),
      /"ftp:\/\/files\.example\/x" must be an http or https URL/,
    );
    await expectDataError(
      await send(h(), a, { text: '<-short->', links: ['not a url'] }),
      /"not a url" is not a URL/,
    );
    await expectDataError(
      await send(h(), a, { text: '<-short->', links: ['javascript:alert(1)'] }),
      /javascript/,
    );
  });

  it('a sender is 3-11 letters or digits with a letter, or up to 15 digits, or -7', async () => {
    const a = await h().account();
    for (const bad of ['ab', 'abcdefghijkl', '1234567890123456', 'ab-cd', 'Pigéon']) {
      await expectDataError(
        await send(h(), a, { sender: bad }),
        new RegExp(`sender "${bad}" must be 3 to 11`),
      );
    }
    for (const good of ['Pig', 'Pigeon2026', 'ABCDEFGHIJK', '33612345678', '123456789012345', '1']) {
      expect((await send(h(), a, { sender: good }, '/send/simulate')).body.status, good).toBe(1);
    }
  });

  it('unicode must be 0 or 1, or -7', async () => {
    const a = await h().account();
    await expectDataError(await send(h(), a, { unicode: 2 }), /unicode "2" must be 0 or 1/);
    await expectDataError(await send(h(), a, { unicode: 'yes' }), /unicode "yes" must be 0 or 1/);
    expect((await send(h(), a, { unicode: '1' }, '/send/simulate')).body.status).toBe(1);
    expect((await send(h(), a, { unicode: 0 }, '/send/simulate')).body.status).toBe(1);
  });

  it('a bad or impossible delay is -4', async () => {
    const a = await h().account();
    const bad = await send(h(), a, { delay: '2026-05-04T10:00:00' });
    expect(bad.body).toMatchObject({ status: -4 });
    expect(bad.body.details).toMatch(/not in the format Y-m-d H:i:s/);
    const impossible = await send(h(), a, { delay: '2026-02-30 10:00:00' });
    expect(impossible.body).toMatchObject({ status: -4 });
    expect(impossible.body.details).toMatch(/not a possible date/);
  });

  it('a future delay schedules the campaign and its messages; a past one means now', async () => {
    const a = await h().account();
    const now = h().clock.now();
    const later = await send(h(), a, { delay: '2026-07-14 10:00:00' });
    const due = Date.UTC(2026, 6, 14, 8, 0, 0);
    const campaign = await h()
      .deps.store.db.selectFrom('campaigns')
      .select(['due_at', 'status'])
      .where('id', '=', Number(later.body.ticket))
      .executeTakeFirstOrThrow();
    expect(campaign).toEqual({ due_at: due, status: 'scheduled' });
    expect((await messagesOf(h(), later.body.ticket))[0]).toMatchObject({ due_at: due, state: 'queued' });
    const past = await send(h(), a, { delay: '2020-01-01 00:00:00' });
    expect((await messagesOf(h(), past.body.ticket))[0].due_at).toBe(now);
  });

  it('GET /send needs text and to, and takes the token from the query', async () => {
    const a = await h().account();
    const missing = await call(h().app, 'GET', `/send?text=hi&token=${a.token}`);
    await expectDataError(missing, /to is required/);
    const r = await call(h().app, 'GET', `/send?text=hi&to=${fr(1)}&gsmsmsid=g1&token=${a.token}`);
    expect(r.body).toMatchObject({ status: 1, sent: 1, cost: 1 });
    const [m] = await messagesOf(h(), r.body.ticket);
    expect(m).toMatchObject({ recipient: fr(1), gsmsmsid: 'g1', text: 'hi' });
    const simulated = await call(h().app, 'GET', `/send/simulate?text=hi&to=${fr(1)}&token=${a.token}`);
    expect(simulated.body.status).toBe(1);
    expect(simulated.body.ticket).toBeUndefined();
    // The query token is only for GET /send: other routes still want the header.
    expect((await call(h().app, 'GET', `/credits?token=${a.token}`)).body.status).toBe(-1);
  });

  it('GET /send takes links the way PHP writes an array (links[0]=…, links[]=…), in their order', async () => {
    const a = await h().account();
    const text = encodeURIComponent('A <-short-> then B <-short->');
    const a1 = encodeURIComponent('https://example.com/a');
    const b1 = encodeURIComponent('https://example.com/b');
    for (const links of [`links%5B1%5D=${b1}&links%5B0%5D=${a1}`, `links[]=${a1}&links[]=${b1}`]) {
      const r = await call(h().app, 'GET', `/send?text=${text}&to=${fr(1)}&${links}&token=${a.token}`);
      expect(r.body).toMatchObject({ status: 1, sent: 1 });
      const urls = await h()
        .deps.store.db.selectFrom('links')
        .select('long_url')
        .where('campaign_id', '=', Number(r.body.ticket))
        .orderBy('id')
        .execute();
      expect(urls.map((u) => u.long_url)).toEqual(['https://example.com/a', 'https://example.com/b']);
    }
  });
});

describeEachDialect(
  'send: limits and countries from configuration',
  (h) => {
    it('more recipients than MAX_RECIPIENTS is -7', async () => {
      const a = await h().account();
      const gsm = [1, 2, 3, 4].map((n) => ({ value: fr(n) }));
      await expectDataError(await send(h(), a, { gsm }), /has 4 recipients; at most 3 are allowed per send/);
      expect((await send(h(), a, { gsm: gsm.slice(0, 3) })).body.status).toBe(1);
    });

    it('a number of a country not in ALLOWED_COUNTRIES is counted in not_allowed', async () => {
      const a = await h().account();
      const gsm = [{ value: fr(1) }, { value: '32470123456' }, { value: '14155552671' }];
      const r = await send(h(), a, { gsm });
      expect(r.body).toMatchObject({ status: 1, total: 3, sent: 2, not_allowed: 1, invalid: 0, cost: 2 });
      const recipients = (await messagesOf(h(), r.body.ticket)).map((m) => m.recipient);
      expect(recipients).toEqual([fr(1), '32470123456']);
    });
  },
  { MAX_RECIPIENTS: '3', ALLOWED_COUNTRIES: 'FR,BE' },
);

describeEachDialect('send: filtering', (h) => {
  it('counts invalid, duplicated, blacklisted and npai numbers; sent is what is left', async () => {
    const a = await h().account();
    const b = await h().account();
    const bl = await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: fr(3) }, { value: fr(5) }] } } },
    });
    expect(bl.body).toMatchObject({ status: 1, added_contacts: 2 });
    const np = await call(h().app, 'POST', '/npai', {
      token: a.token,
      json: { npai: { contacts: { gsm: [{ value: `+${fr(4)}` }, { value: fr(5) }] } } },
    });
    expect(np.body).toMatchObject({ status: 1, added_contacts: 2 });
    const gsm = [
      { value: fr(1), gsmsmsid: 'a' },
      { value: `+${fr(1)}` }, // duplicate after normalization
      { value: `00${fr(1)}` }, // duplicate after normalization
      { value: fr(2), gsmsmsid: 'b' },
      { value: 'abc' }, // not digits
      { value: '3361234' }, // too short for France
      { value: '33712345678' }, // unallocated French range
      { value: 'abc' }, // a repeated invalid number is still invalid
      { value: fr(3) }, // blacklisted
      { value: fr(4) }, // npai
      { value: fr(5) }, // on both lists: blacklisted
      { value: `00${fr(6)}`, gsmsmsid: 'c' },
    ];
    const r = await send(h(), a, { gsm });
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      ticket: expect.any(String),
      cost: 3,
      credits: 997,
      total: 12,
      sent: 3,
      blacklisted: 2,
      duplicated: 2,
      invalid: 4,
      npai: 1,
      not_allowed: 0,
    });
    const messages = await messagesOf(h(), r.body.ticket);
    expect(messages.map((m) => [m.seq, m.recipient, m.gsmsmsid])).toEqual([
      [0, fr(1), 'a'],
      [1, fr(2), 'b'],
      [2, fr(6), 'c'],
    ]);
    // Another account's blacklist filters nothing of this one.
    const other = await send(h(), b, { gsm: [{ value: fr(3) }, { value: fr(4) }] });
    expect(other.body).toMatchObject({ sent: 2, blacklisted: 0, npai: 0 });
  });

  it('concurrent small sends of several accounts, whose lookups are read together, each filter by their own lists', async () => {
    const a = await h().account();
    const b = await h().account();
    await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: fr(3) }] } } },
    });
    await call(h().app, 'POST', '/npai', {
      token: b.token,
      json: { npai: { contacts: { gsm: [{ value: fr(4) }] } } },
    });
    const sends = [];
    for (let i = 0; i < 20; i++) {
      const account = i % 2 === 0 ? a : b;
      sends.push(send(h(), account, { gsm: [{ value: fr(1) }, { value: fr(3) }, { value: fr(4) }] }));
    }
    const answers = await Promise.all(sends);
    answers.forEach((r, i) => {
      expect(r.body).toMatchObject(
        i % 2 === 0 ? { sent: 2, blacklisted: 1, npai: 0 } : { sent: 2, blacklisted: 0, npai: 1 },
      );
    });
  });

  it('filters a send larger than one lookup chunk, across chunks', async () => {
    const a = await h().account({ credits: 5000 });
    const gsm = [...Array(1200)].map((_, n) => ({ value: `336${String(40000000 + n)}` }));
    const plain = await send(h(), a, { gsm }, '/send/simulate');
    expect(plain.body).toMatchObject({ status: 1, total: 1200, sent: 1200, blacklisted: 0, npai: 0 });
    await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [gsm[10], gsm[600], gsm[1150]] } } },
    });
    await call(h().app, 'POST', '/npai', {
      token: a.token,
      json: { npai: { contacts: { gsm: [gsm[999]] } } },
    });
    const r = await send(h(), a, { gsm });
    expect(r.body).toMatchObject({ status: 1, total: 1200, sent: 1196, blacklisted: 3, npai: 1, cost: 1196 });
    const recipients = new Set((await messagesOf(h(), r.body.ticket)).map((m) => m.recipient));
    for (const i of [10, 600, 1150, 999]) expect(recipients.has(gsm[i].value)).toBe(false);
    expect(recipients.size).toBe(1196);
  });

  it('GET /blacklist and /npai list the account numbers; adding one again adds nothing', async () => {
    const a = await h().account();
    await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: fr(7) }] } } },
    });
    const again = await call(h().app, 'POST', '/blacklist', {
      token: a.token,
      json: { blacklist: { contacts: { gsm: [{ value: fr(7) }, { value: fr(8) }] } } },
    });
    expect(again.body).toMatchObject({ status: 1, added_contacts: 1 });
    const list = await call(h().app, 'GET', '/blacklist', { token: a.token });
    expect(list.body.list.map((e: { destination: string }) => e.destination)).toEqual([fr(7), fr(8)]);
    expect(list.body).toMatchObject({ totalRecords: 2, totalDisplayRecords: 2 });
    expect((await call(h().app, 'GET', '/npai', { token: a.token })).body.list).toEqual([]);
    const other = await h().account();
    expect((await call(h().app, 'GET', '/blacklist', { token: other.token })).body.list).toEqual([]);
  });
});

describeEachDialect('send: pricing on the final text', (h) => {
  const cost = async (o: SendOptions) => {
    const a = await h().account();
    return (await send(h(), a, o, '/send/simulate')).body;
  };

  it('GSM-7: 160 characters are one SMS, 161 are two, 307 are three', async () => {
    expect((await cost({ text: 'a'.repeat(160) })).cost).toBe(1);
    expect((await cost({ text: 'a'.repeat(161) })).cost).toBe(2);
    expect((await cost({ text: 'a'.repeat(307) })).cost).toBe(3);
    expect((await cost({ text: 'a'.repeat(161), gsm: [{ value: fr(1) }, { value: fr(2) }] })).cost).toBe(4);
  });

  it('extension characters count two', async () => {
    expect((await cost({ text: '€'.repeat(80) })).cost).toBe(1);
    expect((await cost({ text: '€'.repeat(81) })).cost).toBe(2);
    expect((await cost({ text: `${'a'.repeat(159)}{` })).cost).toBe(2);
  });

  it('UCS-2 when a character needs it or unicode is 1: 70 per SMS, 67 per part', async () => {
    expect((await cost({ text: 'ç'.repeat(70) })).cost).toBe(1);
    expect((await cost({ text: `${'a'.repeat(70)}ç` })).cost).toBe(2);
    expect((await cost({ text: 'ç'.repeat(135) })).cost).toBe(3);
    expect((await cost({ text: 'a'.repeat(71), unicode: 1 })).cost).toBe(2);
    expect((await cost({ text: 'a'.repeat(71), unicode: 0 })).cost).toBe(1);
  });

  it('links are priced at their short length, and marketing pays for the STOP mention', async () => {
    const a = await h().account({ credits: 100 });
    const shortLength = h().deps.services.links.shortUrlLength;
    const longUrl = `https://example.com/${'x'.repeat(300)}`;
    // The text holds one marker; the short URL replaces it, not the 320-character long URL.
    const fits = 'a'.repeat(160 - shortLength);
    const r1 = await send(h(), a, { text: `${fits}<-short->`, links: [longUrl] });
    expect(r1.body.cost).toBe(1);
    const [m1] = await messagesOf(h(), r1.body.ticket);
    expect(m1.text.length).toBe(160);
    expect(m1.text.startsWith(fits + h().config.LINK_BASE_URL)).toBe(true);
    const r2 = await send(h(), a, { text: `${fits}a<-short->`, links: [longUrl] });
    expect(r2.body.cost).toBe(2);

    // 150 characters: one SMS as an alert; with "\nSTOP au 36180" (14 more) two as marketing.
    const text = 'b'.repeat(150);
    const alert = await send(h(), a, { text, pushtype: 'alert' });
    expect(alert.body.cost).toBe(1);
    expect((await messagesOf(h(), alert.body.ticket))[0].text).toBe(text);
    const marketing = await send(h(), a, { text, pushtype: 'marketing' });
    expect(marketing.body.cost).toBe(2);
    const [m] = await messagesOf(h(), marketing.body.ticket);
    expect(m).toMatchObject({ text: `${text}\nSTOP au 36180`, parts: 2, encoding: 'gsm7' });
  });

  it('<-stop-> places the mention in marketing texts and disappears from alerts', async () => {
    const a = await h().account();
    const m = await send(h(), a, { text: 'Sale <-stop-> today', pushtype: 'marketing' });
    expect((await messagesOf(h(), m.body.ticket))[0].text).toBe('Sale STOP au 36180 today');
    const al = await send(h(), a, { text: 'Code 42<-stop->', pushtype: 'alert' });
    expect((await messagesOf(h(), al.body.ticket))[0].text).toBe('Code 42');
  });

  it('each message keeps the parts and encoding it was priced with', async () => {
    const a = await h().account();
    const r = await send(h(), a, { text: 'ç'.repeat(71) });
    expect((await messagesOf(h(), r.body.ticket))[0]).toMatchObject({ parts: 2, encoding: 'ucs2' });
  });
});

describeEachDialect('send: links, credits and storage', (h) => {
  it('each recipient gets its own short link per marker', async () => {
    const a = await h().account();
    const links = ['https://shop.example/a', 'https://shop.example/b'];
    const gsm = [1, 2, 3].map((n) => ({ value: fr(n) }));
    const r = await send(h(), a, { text: 'A <-short-> B <-short->', links, gsm });
    expect(r.body).toMatchObject({ status: 1, sent: 3 });
    const rows = await h()
      .deps.store.db.selectFrom('links')
      .selectAll()
      .where('campaign_id', '=', Number(r.body.ticket))
      .orderBy('id')
      .execute();
    expect(rows).toHaveLength(6);
    expect(new Set(rows.map((l) => l.code)).size).toBe(6);
    const base = h().config.LINK_BASE_URL;
    for (const m of await messagesOf(h(), r.body.ticket)) {
      const mine = rows.filter((l) => l.message_seq === m.seq);
      expect(mine.map((l) => l.long_url)).toEqual(links);
      expect(mine.every((l) => l.account_id === a.id)).toBe(true);
      expect(m.text).toBe(`A ${base}/${mine[0].code} B ${base}/${mine[1].code}`);
    }
  });

  it('debits the cost, and a short balance is -3 with nothing stored', async () => {
    const a = await h().account({ credits: 3 });
    const db = h().deps.store.db;
    const count = async (table: 'campaigns' | 'messages' | 'links') =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', '=', a.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const ok = await send(h(), a, { text: 'hi <-short->', links: ['https://x.example'] });
    expect(ok.body).toMatchObject({ status: 1, cost: 1, credits: 2 });
    const before = {
      campaigns: await count('campaigns'),
      messages: await count('messages'),
      links: await count('links'),
    };
    const gsm = [1, 2, 3].map((n) => ({ value: fr(n) }));
    const short = await send(h(), a, { text: 'hi <-short->', links: ['https://x.example'], gsm });
    expect(short.body.status).toBe(-3);
    expect(short.body.details).toMatch(/costs 3 credits and 2 are available/);
    expect({
      campaigns: await count('campaigns'),
      messages: await count('messages'),
      links: await count('links'),
    }).toEqual(before);
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(2);
  });

  it('simulate prices without a ticket, storing and charging nothing', async () => {
    const a = await h().account({ credits: 10 });
    const r = await send(h(), a, { text: 'hi', gsm: [{ value: fr(1) }, { value: fr(2) }] }, '/send/simulate');
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      cost: 2,
      credits: 8,
      total: 2,
      sent: 2,
      blacklisted: 0,
      duplicated: 0,
      invalid: 0,
      npai: 0,
      not_allowed: 0,
    });
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(10);
    const stored = await h()
      .deps.store.db.selectFrom('campaigns')
      .select('id')
      .where('account_id', '=', a.id)
      .execute();
    expect(stored).toEqual([]);
    const tooMany = [...Array(11)].map((_, n) => ({ value: fr(n) }));
    expect((await send(h(), a, { gsm: tooMany }, '/send/simulate')).body.status).toBe(-3);
  });

  it('an unlimited sub-account draws on its parent, which the campaign records', async () => {
    const parent = await h().account({ credits: 10 });
    const child = await h().account({ credits: 0, parentId: parent.id, unlimited: true });
    const r = await send(h(), child, { gsm: [{ value: fr(1) }, { value: fr(2) }] });
    expect(r.body).toMatchObject({ status: 1, cost: 2, credits: 8 });
    expect((await call(h().app, 'GET', '/credits', { token: parent.token })).body.credits).toBe(8);
    const campaign = await h()
      .deps.store.db.selectFrom('campaigns')
      .select(['account_id', 'billed_account_id'])
      .where('id', '=', Number(r.body.ticket))
      .executeTakeFirstOrThrow();
    expect(campaign).toEqual({ account_id: child.id, billed_account_id: parent.id });
    // A limited sub-account spends its own credits.
    const limited = await h().account({ credits: 0, parentId: parent.id });
    expect((await send(h(), limited)).body.status).toBe(-3);
  });
});

describeEachDialect('send: JSON and XML', (h) => {
  it('POST /send answers the same in XML as in JSON, and reads gsmsmsid from the attribute', async () => {
    const a = await h().account();
    const json = await send(h(), a, {
      text: 'Hi <-short->',
      links: ['http://example.com/p'],
      gsm: [{ value: fr(1), gsmsmsid: '1' }],
    });
    const xml = await call(h().app, 'POST', '/send', {
      token: a.token,
      xml:
        '<sms><message><text>Hi &lt;-short-&gt;</text><pushtype>alert</pushtype><links>http://example.com/p</links></message>' +
        `<recipients><gsm gsmsmsid="1">${fr(1)}</gsm></recipients></sms>`,
    });
    expect(xml.contentType).toContain('application/xml');
    expect(xml.raw).toMatch(/^<\?xml[^>]*\?><response><status>1<\/status><message>OK<\/message><ticket>/);
    const { ticket: _j, credits: _jc, ...jsonRest } = json.body;
    const { ticket: _x, credits: _xc, ...xmlRest } = xml.body;
    const asStrings = Object.fromEntries(Object.entries(jsonRest).map(([k, v]) => [k, String(v)]));
    expect(xmlRest).toEqual(asStrings);
    expect(Number(xml.body.credits)).toBe(json.body.credits - 1);
    const [m] = await messagesOf(h(), xml.body.ticket);
    expect(m).toMatchObject({ recipient: fr(1), gsmsmsid: '1' });
    expect(m.text).toMatch(/^Hi http:\/\/.+\/[0-9A-Za-z]{10}$/);
  });

  it('a number or gsmsmsid given as a JSON number is read as its digits', async () => {
    const a = await h().account();
    const r = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: { sms: { message: { text: 'x' }, recipients: { gsm: [{ value: Number(fr(1)), gsmsmsid: 7 }] } } },
    });
    expect(r.body).toMatchObject({ status: 1, sent: 1 });
    expect((await messagesOf(h(), r.body.ticket))[0]).toMatchObject({ recipient: fr(1), gsmsmsid: '7' });
  });

  it('XML errors name the field, as JSON ones do', async () => {
    const a = await h().account();
    const xml = await call(h().app, 'POST', '/send', {
      token: a.token,
      xml: `<sms><message><text>x</text><pushtype>promo</pushtype></message><recipients><gsm>${fr(1)}</gsm></recipients></sms>`,
    });
    expect(xml.body).toMatchObject({ status: '-7' });
    expect(xml.body.details).toMatch(/pushtype "promo"/);
  });
});

describeEachDialect('send: concurrent sends share a commit, each all or nothing', (h) => {
  it('of concurrent sends, the one the balance cannot cover is -3 and leaves nothing; the others are stored', async () => {
    const a = await h().account({ credits: 2 });
    const b = await h().account({ credits: 5 });
    const body = (n: number) => ({
      sms: {
        message: { text: 'hi <-short->', links: ['https://x.example'] },
        recipients: { gsm: [{ value: fr(n) }] },
      },
    });
    // Requests issued together are parsed in the same turn, so they go through one group transaction.
    const results = await Promise.all([
      call(h().app, 'POST', '/send', { token: a.token, json: body(1) }),
      call(h().app, 'POST', '/send', { token: b.token, json: body(2) }),
      call(h().app, 'POST', '/send', { token: a.token, json: body(3) }),
      call(h().app, 'POST', '/send', { token: a.token, json: body(4) }),
      call(h().app, 'POST', '/send', { token: b.token, json: body(5) }),
    ]);
    const statuses = results.map((r) => r.body.status);
    expect(statuses.filter((s) => s === -3)).toHaveLength(1);
    expect(statuses.filter((s) => s === 1)).toHaveLength(4);
    const db = h().deps.store.db;
    const campaignsOfA = await db
      .selectFrom('campaigns')
      .select('id')
      .where('account_id', '=', a.id)
      .execute();
    expect(campaignsOfA).toHaveLength(2);
    const linksOfA = await db.selectFrom('links').select('id').where('account_id', '=', a.id).execute();
    expect(linksOfA).toHaveLength(2);
    // A's three requests were for fr(1), fr(3) and fr(4): its stored messages are those of the two that succeeded.
    const numbersOfA = [fr(1), fr(3), fr(4)];
    const succeeded = [0, 2, 3].map((i, k) => (results[i].body.status === 1 ? numbersOfA[k] : undefined));
    const recipientsOfA = await db
      .selectFrom('messages')
      .select('recipient')
      .where('account_id', '=', a.id)
      .orderBy('recipient')
      .execute();
    expect(recipientsOfA.map((m) => m.recipient)).toEqual(succeeded.filter((n) => n !== undefined));
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.credits).toBe(0);
    expect((await call(h().app, 'GET', '/credits', { token: b.token })).body.credits).toBe(3);
  });
});
