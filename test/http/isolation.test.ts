// A token of account A never reads or changes B's resources, and gets -5 for B's ids.
import { expect, it } from 'vitest';
import { call, describeEachDialect } from '../helpers/harness.ts';

describeEachDialect('tenant isolation', (h) => {
  it("A cannot read, change or delete B's webhooks", async () => {
    const a = await h().account();
    const b = await h().account();
    const hook = await call(h().app, 'POST', '/webhook', {
      token: b.token,
      json: { webhook: { type: 'DLR', url: 'https://b.example/dlr' } },
    });
    const id = hook.body.webhook.webhook_id;
    expect((await call(h().app, 'GET', '/webhook', { token: a.token })).body.webhooks).toEqual([]);
    for (const [method, url, json] of [
      ['GET', `/webhook/${id}`, undefined],
      ['PUT', `/webhook/${id}`, { webhook: { url: 'https://a.example/steal' } }],
      ['PUT', `/webhook/${id}/status`, { webhook: { status: 'paused' } }],
      ['DELETE', `/webhook/${id}`, undefined],
    ] as const) {
      expect((await call(h().app, method, url, { token: a.token, json })).body.status).toBe(-5);
    }
    const still = await call(h().app, 'GET', `/webhook/${id}`, { token: b.token });
    expect(still.body.webhook).toMatchObject({ url: 'https://b.example/dlr', status: 'live' });
  });

  it("A cannot read or delete B's tokens", async () => {
    const a = await h().account();
    const b = await h().account();
    const bTokens = (await call(h().app, 'GET', '/token', { token: b.token })).body.tokens;
    const id = bTokens[0].api_token_id;
    expect((await call(h().app, 'GET', `/token/${id}`, { token: a.token })).body.status).toBe(-5);
    expect((await call(h().app, 'DELETE', `/token/${id}`, { token: a.token })).body.status).toBe(-5);
    expect((await call(h().app, 'GET', '/token', { token: a.token })).body.tokens).toHaveLength(1);
    expect((await call(h().app, 'GET', '/credits', { token: b.token })).body.status).toBe(1);
  });

  it("A's balance notification is its own", async () => {
    const a = await h().account();
    const b = await h().account();
    await call(h().app, 'PUT', '/notification/balance', {
      token: b.token,
      json: { notification: { alert_trigger: '77' } },
    });
    expect(
      (await call(h().app, 'GET', '/notification/balance', { token: a.token })).body.notification
        .alert_trigger,
    ).toBe('0');
  });

  it("A sees its own credits, an unlimited sub-account sees its parent's", async () => {
    const parent = await h().account({ credits: 300 });
    const unlimited = await h().account({ parentId: parent.id, unlimited: true, credits: 0 });
    const limited = await h().account({ parentId: parent.id, credits: 5 });
    expect((await call(h().app, 'GET', '/credits', { token: unlimited.token })).body.credits).toBe(300);
    expect((await call(h().app, 'GET', '/credits', { token: limited.token })).body.credits).toBe(5);
  });
});
