import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('webhooks', (h) => {
  it('POST /webhook creates one per type, with its id and signing secret', async () => {
    const a = await h().account();
    const r = await call(h().app, 'POST', '/webhook', {
      token: a.token,
      json: { webhook: { type: 'DLR', url: 'https://hooks.example.com/dlr', signature: 's3cret' } },
    });
    expect(r.body).toEqual({
      status: 1,
      message: 'OK',
      webhook: {
        webhook_id: expect.stringMatching(/^\d+$/),
        type: 'DLR',
        url: 'https://hooks.example.com/dlr',
        signature: 's3cret',
        format: 'json',
        status: 'live',
        last_http_code: null,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
      },
    });
  });

  it('several webhooks of every type can exist; GET /webhook lists them (JSON and XML)', async () => {
    const a = await h().account();
    const types = ['MO', 'DLR', 'STOP', 'CLICKER', 'BALANCE_ALERT', 'MO'];
    for (const [i, type] of types.entries()) {
      const r = await call(h().app, 'POST', '/webhook', {
        token: a.token,
        xml: `<webhook><type>${type}</type><url>https://example.com/h/${i}?a=1&amp;b=2</url></webhook>`,
      });
      expect(r.body).toMatchObject({
        status: '1',
        webhook: { type, url: `https://example.com/h/${i}?a=1&b=2` },
      });
    }
    const json = await call(h().app, 'GET', '/webhook', { token: a.token });
    expect(json.body.webhooks.map((w: { type: string }) => w.type)).toEqual(types);
    expect(json.raw).not.toContain('whsec_');
    const xml = await call(h().app, 'GET', '/webhook', { token: a.token, accept: 'application/xml' });
    expect(xml.raw.match(/<webhooks>/g)).toHaveLength(types.length);
    expect(xml.body.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toEqual(
      json.body.webhooks.map((w: { webhook_id: string }) => w.webhook_id),
    );
  });

  it('validates type and url, naming the rule', async () => {
    const a = await h().account();
    const cases: [Record<string, string>, string][] = [
      [{ url: 'https://x.example' }, 'webhook.type is required'],
      [{ type: 'MO' }, 'webhook.url is required'],
      [
        { type: 'SMS', url: 'https://x.example' },
        'webhook.type "SMS" is not one of: MO, DLR, STOP, CLICKER, BALANCE_ALERT, MODERATION',
      ],
      [{ type: 'MO', url: 'not a url' }, 'webhook.url "not a url" is not a valid URL'],
      [{ type: 'MO', url: 'ftp://x.example/' }, 'webhook.url must be http or https, not ftp'],
      [
        { type: 'MO', url: 'https://x.example', format: 'xml' },
        'webhook.format "xml" is not one of: json, form (or application/json, application/x-www-form-urlencoded)',
      ],
    ];
    for (const [webhook, details] of cases) {
      const r = await call(h().app, 'POST', '/webhook', { token: a.token, json: { webhook } });
      expect(r.body).toEqual({ status: -7, message: 'Data error', details });
    }
  });

  it('a webhook takes a body format: json by default, form or its media type, changed by PUT', async () => {
    const a = await h().account();
    const form = await call(h().app, 'POST', '/webhook', {
      token: a.token,
      json: {
        webhook: { type: 'MO', url: 'https://x.example/mo', format: 'application/x-www-form-urlencoded' },
      },
    });
    expect(form.body.webhook.format).toBe('form');
    const id = form.body.webhook.webhook_id;
    const put = await call(h().app, 'PUT', `/webhook/${id}`, {
      token: a.token,
      json: { webhook: { format: 'JSON' } },
    });
    expect(put.body.webhook.format).toBe('json');
    const xml = await call(h().app, 'POST', '/webhook', {
      token: a.token,
      xml: '<webhook><type>STOP</type><url>https://x.example/stop</url><format>form</format></webhook>',
    });
    expect(xml.body.webhook.format).toBe('form');
  });

  it('a webhook can be read, changed, paused and deleted by its owner (GET, PUT, PUT status, DELETE)', async () => {
    const a = await h().account();
    const created = await call(h().app, 'POST', '/webhook', {
      token: a.token,
      json: { webhook: { type: 'MO', url: 'https://example.com/mo' } },
    });
    const id = created.body.webhook.webhook_id;
    const updated = await call(h().app, 'PUT', `/webhook/${id}`, {
      token: a.token,
      json: { webhook: { url: 'https://example.com/mo2', type: 'stop' } },
    });
    expect(updated.body.webhook).toMatchObject({
      webhook_id: id,
      type: 'STOP',
      url: 'https://example.com/mo2',
    });
    const paused = await call(h().app, 'PUT', `/webhook/${id}/status`, {
      token: a.token,
      json: { webhook: { status: 'paused' } },
    });
    expect(paused.body.webhook.status).toBe('paused');
    const bad = await call(h().app, 'PUT', `/webhook/${id}/status`, {
      token: a.token,
      json: { webhook: { status: 'dead' } },
    });
    expect(bad.body).toMatchObject({ status: -7 });
    expect((await call(h().app, 'GET', `/webhook/${id}`, { token: a.token })).body.webhook.url).toBe(
      'https://example.com/mo2',
    );
    const deleted = await call(h().app, 'DELETE', `/webhook/${id}`, {
      token: a.token,
      body: '[]',
      contentType: 'application/json',
    });
    expect(deleted.body).toEqual({ status: 1, message: 'OK', deleted_id: id });
    expect((await call(h().app, 'GET', `/webhook/${id}`, { token: a.token })).body.status).toBe(-5);
    expect((await call(h().app, 'GET', '/webhook/abc', { token: a.token })).body.status).toBe(-5);
  });
});
