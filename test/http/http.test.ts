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
