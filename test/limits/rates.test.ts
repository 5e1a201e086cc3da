// Requests per second per account: an account's own limit (or its parent's) counts all its tokens together and
// replaces RATE_LIMIT_TOKEN_RPS (per token) for it; past it, HTTP 429 in the envelope naming the limit. Counted
// on the app's clock, so a second passes when the test moves it.
import { afterAll, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';

describeEachDialect('requests per second per account', (h) => {
  const apps: App[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  /** An API app on the harness's database and manual clock. */
  async function appWith(config: Partial<Config> = {}): Promise<App> {
    const app = buildApi({
      config: { ...h().config, ...config },
      logger: h().deps.logger,
      services: h().deps.services,
      clock: h().clock,
    });
    await app.ready();
    apps.push(app);
    return app;
  }

  const credits = (app: App, token: string) => call(app, 'GET', '/credits', { token });
  const secondToken = async (a: TestAccount) =>
    (await h().deps.services.tokens.createTokenForCli(a.id, `second-${Date.now()}`)).token;

  it('an account at 5 requests per second: 5 accepted in a second across its tokens, then 429 naming its limit, then served again the next second', async () => {
    const app = await appWith();
    const a = await h().account();
    const other = await h().account();
    const t2 = await secondToken(a);
    await h().deps.services.limits.set('cli', a.id, { requests_per_second: 5 });
    h().clock.advance(5000);
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await credits(app, i % 2 === 0 ? a.token : t2));
    expect(answers.map((r) => r.httpCode)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers[5].body).toEqual({
      status: -99,
      message: 'Too many requests',
      details: `more than 5 requests per second for account ${a.id}, all its API tokens together (its requests_per_second limit: pigeon account limits); retry in 1 s`,
    });
    expect(answers[5].headers['retry-after']).toBe('1');
    // Another account is not counted with it.
    expect((await credits(app, other.token)).httpCode).toBe(200);
    h().clock.advance(1000);
    expect((await credits(app, t2)).httpCode).toBe(200);
  });

  it("an account's own limit replaces RATE_LIMIT_TOKEN_RPS for it (0: none); a sub-account inherits its parent's, counted on its own", async () => {
    const app = await appWith({ RATE_LIMIT_TOKEN_RPS: 2 });
    const plain = await h().account();
    const unlimited = await h().account();
    const parent = await h().account();
    const sub = await h().account({ parentId: parent.id });
    await h().deps.services.limits.set('cli', unlimited.id, { requests_per_second: 0 });
    await h().deps.services.limits.set('cli', parent.id, { requests_per_second: 3 });
    h().clock.advance(5000);
    const codes = async (token: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await credits(app, token)).httpCode);
      return out;
    };
    // The instance's per-token limit.
    const plainCodes = await codes(plain.token, 3);
    expect(plainCodes).toEqual([200, 200, 429]);
    const refused = await credits(app, plain.token);
    expect(refused.body.details).toContain('(RATE_LIMIT_TOKEN_RPS)');
    expect(await codes(unlimited.token, 10)).toEqual(Array(10).fill(200));
    expect(await codes(parent.token, 4)).toEqual([200, 200, 200, 429]);
    // The sub-account's own three, not the parent's used ones.
    expect(await codes(sub.token, 4)).toEqual([200, 200, 200, 429]);
  });

  it('sends are counted like any request: a burst of sends past the limit is refused before it is read', async () => {
    const app = await appWith();
    const a = await h().account();
    await h().deps.services.limits.set('cli', a.id, { requests_per_second: 2 });
    h().clock.advance(5000);
    const sendOnce = (n: number) =>
      call(app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Hi' },
            recipients: { gsm: [{ value: `3361234${String(n).padStart(4, '0')}` }] },
          },
        },
      });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await sendOnce(i));
    expect(answers.map((r) => [r.httpCode, r.body.status])).toEqual([
      [200, 1],
      [200, 1],
      [429, -99],
      [429, -99],
    ]);
    const campaigns = await h()
      .deps.store.db.selectFrom('campaigns')
      .select('id')
      .where('account_id', '=', a.id)
      .execute();
    expect(campaigns).toHaveLength(2);
  });
});
