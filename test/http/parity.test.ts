// Every endpoint answers the same fields in JSON and in XML, and reads the same request in either format.
import { expect, it } from 'vitest';
import { type CallResult, call, describeEachDialect } from '../helpers/harness.ts';
import { asXmlWouldSay } from '../helpers/xml.ts';

/** Drops fields that differ by nature between two calls (fresh secrets and ids). */
function stable(body: unknown, volatile: string[]): unknown {
  if (Array.isArray(body)) return body.map((b) => stable(b, volatile));
  if (body && typeof body === 'object') {
    return Object.fromEntries(
      Object.entries(body)
        .filter(([k]) => !volatile.includes(k))
        .map(([k, v]) => [k, stable(v, volatile)]),
    );
  }
  return body;
}

describeEachDialect('JSON and XML parity', (h) => {
  const both = async (
    method: string,
    url: string,
    token: string,
    json?: unknown,
    xml?: string,
  ): Promise<[CallResult, CallResult]> => {
    const j = await call(h().app, method, url, { token, json, accept: 'application/json' });
    const x = await call(h().app, method, url, { token, xml, accept: 'application/xml' });
    expect(j.contentType).toContain('application/json');
    expect(x.contentType).toContain('application/xml');
    expect(x.raw.startsWith('<?xml version="1.0" encoding="UTF-8"?><response>')).toBe(true);
    return [j, x];
  };

  const expectSame = ([j, x]: [CallResult, CallResult], volatile: string[] = []) => {
    expect(j.body.status).toBe(1);
    expect(stable(x.body, volatile)).toEqual(stable(asXmlWouldSay(j.body), volatile));
  };

  it('token endpoints answer the same fields in JSON and XML, and read either', async () => {
    const a = await h().account();
    const child = await h().account({ parentId: a.id });
    expectSame(
      await both('POST', '/token', a.token, { token: { name: 'p' } }, '<token><name>p</name></token>'),
      ['token', 'token_id'],
    );
    expectSame(
      await both(
        'POST',
        `/token/account/${child.id}`,
        a.token,
        { token: { name: 'c' } },
        '<token><name>c</name></token>',
      ),
      ['token', 'token_id'],
    );
    const [list] = await both('GET', '/token', a.token);
    expectSame(await both('GET', '/token', a.token), ['last_used_at']);
    const id = list.body.tokens[1].api_token_id;
    expectSame(await both('GET', `/token/${id}`, a.token), ['last_used_at']);
    const extra = (await call(h().app, 'POST', '/token', { token: a.token, json: { token: { name: 'x' } } }))
      .body;
    const extra2 = (await call(h().app, 'POST', '/token', { token: a.token, json: { token: { name: 'y' } } }))
      .body;
    const j = await call(h().app, 'DELETE', `/token/${extra.token_id}`, { token: a.token });
    const x = await call(h().app, 'DELETE', `/token/${extra2.token_id}`, {
      token: a.token,
      accept: 'application/xml',
    });
    expect(x.body).toEqual({ ...(asXmlWouldSay(j.body) as object), deleted_token: extra2.token_id });
  });

  it('credits and the balance notification answer the same in JSON and XML', async () => {
    const a = await h().account({ credits: 12 });
    expectSame(await both('GET', '/credits', a.token));
    expectSame(
      await both(
        'PUT',
        '/notification/balance',
        a.token,
        { notification: { alert_trigger: '5', alert_email: '1', email: 'x@example.com' } },
        '<notification><alert_trigger>5</alert_trigger><alert_email>1</alert_email><email>x@example.com</email></notification>',
      ),
    );
    expectSame(await both('GET', '/notification/balance', a.token));
  });

  it('webhook endpoints answer the same fields in JSON and XML, and read either', async () => {
    const a = await h().account();
    const [created] = await both(
      'POST',
      '/webhook',
      a.token,
      { webhook: { type: 'MO', url: 'https://x.example/mo' } },
      '<webhook><type>MO</type><url>https://x.example/mo</url></webhook>',
    ).then((pair) => {
      expectSame(pair, ['webhook_id', 'secret']);
      return pair;
    });
    const id = created.body.webhook.webhook_id;
    expectSame(await both('GET', '/webhook', a.token), ['webhook_id']);
    expectSame(await both('GET', `/webhook/${id}`, a.token));
    expectSame(
      await both(
        'PUT',
        `/webhook/${id}`,
        a.token,
        { webhook: { url: 'https://x.example/2' } },
        '<webhook><url>https://x.example/2</url></webhook>',
      ),
    );
    expectSame(
      await both(
        'PUT',
        `/webhook/${id}/status`,
        a.token,
        { webhook: { status: 'paused' } },
        '<webhook><status>paused</status></webhook>',
      ),
    );
    const other = (
      await call(h().app, 'POST', '/webhook', {
        token: a.token,
        json: { webhook: { type: 'DLR', url: 'https://x.example/d' } },
      })
    ).body;
    const j = await call(h().app, 'DELETE', `/webhook/${id}`, { token: a.token });
    const x = await call(h().app, 'DELETE', `/webhook/${other.webhook.webhook_id}`, {
      token: a.token,
      accept: 'application/xml',
    });
    expect(x.body).toEqual({ ...(asXmlWouldSay(j.body) as object), deleted_id: other.webhook.webhook_id });
  });

  it('errors carry the same envelope in both formats', async () => {
    const a = await h().account();
    expect((await both('GET', '/webhook/424242', a.token)).map((r) => r.body)).toEqual([
      { status: -5, message: 'Resource not found', details: 'webhook "424242" not found' },
      { status: '-5', message: 'Resource not found', details: 'webhook "424242" not found' },
    ]);
  });
});
