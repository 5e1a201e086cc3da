import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('wire rules', (h) => {
  it('an unknown path answers -5 on HTTP 200, in JSON and XML, so an SDK raises its typed error', async () => {
    const r = await call(h().app, 'GET', '/nope');
    expect(r.httpCode).toBe(200);
    expect(r.body).toEqual({ status: -5, message: 'Not found', details: 'no endpoint GET /nope' });
    const xml = await call(h().app, 'DELETE', '/nope/1?x=2', { accept: 'application/xml' });
    expect(xml.httpCode).toBe(200);
    expect(xml.raw).toContain('<status>-5</status>');
    expect(xml.body).toMatchObject({ details: 'no endpoint DELETE /nope/1' });
  });

  it('a request without a token gets -1 on HTTP 200', async () => {
    const r = await call(h().app, 'GET', '/credits');
    expect(r.httpCode).toBe(200);
    expect(r.body).toMatchObject({ status: -1 });
    expect(r.body.details).toMatch(/missing API token/);
  });

  it('GET /credits answers with the balance, in JSON or XML by Accept', async () => {
    const a = await h().account({ credits: 42 });
    const json = await call(h().app, 'GET', '/credits', { token: a.token });
    expect(json.body).toEqual({ status: 1, message: 'OK', credits: 42, postpaid: '0', unlimited: '0' });
    const xml = await call(h().app, 'GET', '/credits', { token: a.token, accept: 'application/xml' });
    expect(xml.contentType).toContain('application/xml');
    expect(xml.raw).toContain(
      '<response><status>1</status><message>OK</message><credits>42</credits><postpaid>0</postpaid><unlimited>0</unlimited></response>',
    );
  });

  it('bare and Bearer tokens both authenticate', async () => {
    const a = await h().account();
    const bare = await call(h().app, 'GET', '/credits', { headers: { authorization: a.token } });
    expect(bare.body.status).toBe(1);
  });

  it('malformed JSON is -6 and malformed XML is -2', async () => {
    const a = await h().account();
    const j = await call(h().app, 'POST', '/token', {
      token: a.token,
      body: '{"token":',
      contentType: 'application/json',
    });
    expect(j.body).toMatchObject({ status: -6 });
    const x = await call(h().app, 'POST', '/token', {
      token: a.token,
      body: '<token><name>x</token>',
      contentType: 'application/xml',
    });
    expect(x.body).toMatchObject({ status: '-2' });
    expect(x.contentType).toContain('xml');
  });
});

describeEachDialect('a NUL character (U+0000) in a text', (h) => {
  it('is a -7 in a JSON body, and from a form or a query string where PostgreSQL refuses it; nothing is stored', async () => {
    const a = await h().account();
    // The body as sent on the wire: `text` is spliced in as JSON source, escapes and all.
    const sendRaw = (text: string) =>
      h().app.inject({
        method: 'POST',
        url: '/send',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
        payload: `{"sms":{"message":{"text":"${text}","pushtype":"alert"},"recipients":{"gsm":[{"value":"33612345678"}]}}}`,
      });
    const json = await sendRaw('Hi \\u0000 there');
    expect(json.statusCode).toBe(200);
    expect(json.json()).toMatchObject({ status: -7, details: expect.stringContaining('NUL character') });
    // An escaped backslash before "u0000" is text, not a NUL.
    const escaped = await sendRaw('path \\\\u0000');
    expect(escaped.json()).toMatchObject({ status: 1, sent: 1 });
    const query = await call(h().app, 'GET', `/send?text=Hi%00there&to=33612345679&token=${a.token}`);
    expect(query.httpCode).toBe(200);
    // SQLite stores the text as given; PostgreSQL cannot, and the send is refused whole.
    if (h().deps.store.dialect === 'postgres') {
      expect(query.body).toMatchObject({ status: -7, details: expect.stringContaining('NUL character') });
    } else expect(query.body).toMatchObject({ status: 1 });
    const credits = await call(h().app, 'GET', '/credits', { token: a.token });
    expect(Number(credits.body.credits)).toBe(h().deps.store.dialect === 'postgres' ? 999 : 998);
  });
});
