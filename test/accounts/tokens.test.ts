import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { hashToken } from '../../src/accounts/secrets.ts';
import { zonedTime } from '../../src/shared/zoned-time.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

const wallTime = (zone: string, ms: number) => zonedTime(zone).wallTime(ms);

describeEachDialect('tokens and authentication', (h) => {
  it('POST /token returns a new token that authenticates, in JSON and in XML', async () => {
    const a = await h().account();
    const json = await call(h().app, 'POST', '/token', { token: a.token, json: { token: { name: 'ci' } } });
    expect(json.body).toMatchObject({ status: 1, message: 'OK', token_id: expect.stringMatching(/^\d+$/) });
    expect(json.body.token).toMatch(/^[0-9A-Za-z]{43}$/);
    const xml = await call(h().app, 'POST', '/token', {
      token: a.token,
      xml: '<?xml version="1.0"?><token><name>xml one</name></token>',
    });
    expect(xml.contentType).toContain('application/xml');
    expect(xml.body).toMatchObject({ status: '1', message: 'OK', token_id: expect.stringMatching(/^\d+$/) });
    for (const token of [json.body.token, xml.body.token]) {
      expect((await call(h().app, 'GET', '/credits', { token })).body.status).toBe(1);
    }
  });

  it('only a hash of the token is stored', async () => {
    const a = await h().account();
    const rows = await h()
      .deps.store.db.selectFrom('tokens')
      .select('token_hash')
      .where('account_id', '=', a.id)
      .execute();
    expect(rows.map((r) => r.token_hash)).toEqual([hashToken(a.token)]);
    expect(JSON.stringify(rows)).not.toContain(a.token);
  });

  it('token.name is required and must not be empty', async () => {
    const a = await h().account();
    const missing = await call(h().app, 'POST', '/token', { token: a.token, json: { token: {} } });
    expect(missing.body).toMatchObject({ status: -7, details: 'token.name is required' });
    const empty = await call(h().app, 'POST', '/token', { token: a.token, json: { token: { name: '  ' } } });
    expect(empty.body).toMatchObject({ status: -7, details: 'token.name must not be empty' });
  });

  it('a token with a ttl stops working when it expires', async () => {
    const a = await h().account();
    const created = await call(h().app, 'POST', '/token', {
      token: a.token,
      json: { token: { name: 'short', ttl: 60 } },
    });
    const token = created.body.token;
    expect((await call(h().app, 'GET', '/credits', { token })).body.status).toBe(1);
    h().clock.advance(60_000);
    const expired = await call(h().app, 'GET', '/credits', { token });
    expect(expired.body).toMatchObject({ status: -1, details: 'API token has expired' });
  });

  it('allowed_ips restricts the addresses a token works from (addresses and CIDRs)', async () => {
    const a = await h().account();
    const only = await call(h().app, 'POST', '/token', {
      token: a.token,
      json: { token: { name: 'office', allowed_ips: ['10.1.2.0/24', '2001:db8::1'] } },
    });
    const token = only.body.token;
    const from = async (ip: string) =>
      (
        await h().app.inject({
          method: 'GET',
          url: '/credits',
          headers: { authorization: token },
          remoteAddress: ip,
        })
      ).json().status;
    expect(await from('10.1.2.77')).toBe(1);
    expect(await from('::ffff:10.1.2.77')).toBe(1);
    expect(await from('2001:db8::1')).toBe(1);
    expect(await from('10.1.3.1')).toBe(-1);
    expect(await from('127.0.0.1')).toBe(-1);
    const bad = await call(h().app, 'POST', '/token', {
      token: a.token,
      json: { token: { name: 'x', allowed_ips: ['10.0.0.0/33'] } },
    });
    expect(bad.body).toMatchObject({ status: -7, details: expect.stringContaining('10.0.0.0/33') });
  });

  it('an unknown token, and a deleted one, get -1', async () => {
    const a = await h().account();
    expect((await call(h().app, 'GET', '/credits', { token: 'nope' })).body.status).toBe(-1);
    const created = await call(h().app, 'POST', '/token', {
      token: a.token,
      json: { token: { name: 'tmp' } },
    });
    // Used once, so the server knows it, then deleted: it stops at once.
    expect((await call(h().app, 'GET', '/credits', { token: created.body.token })).body.status).toBe(1);
    const deleted = await call(h().app, 'DELETE', `/token/${created.body.token_id}`, { token: a.token });
    expect(deleted.body).toEqual({ status: 1, message: 'OK', deleted_token: created.body.token_id });
    expect((await call(h().app, 'GET', '/credits', { token: created.body.token })).body.status).toBe(-1);
  });

  it('a token deleted by another process stops working within a second', async () => {
    const a = await h().account();
    expect((await call(h().app, 'GET', '/credits', { token: a.token })).body.status).toBe(1);
    await h().deps.store.db.deleteFrom('tokens').where('account_id', '=', a.id).execute();
    h().clock.advance(1_000);
    const after = await call(h().app, 'GET', '/credits', { token: a.token });
    expect(after.body).toMatchObject({ status: -1, details: 'unknown or revoked API token' });
  });

  it("GET /token lists tokens in SMSFactor's shape without their secrets; GET /token/:id reads one", async () => {
    const a = await h().account();
    const createdAt = h().clock.now();
    const second = await call(h().app, 'POST', '/token', {
      token: a.token,
      json: { token: { name: 'second', ttl: 3600, allowed_ips: ['10.0.0.0/8'] } },
    });
    expect(second.body).toEqual({
      status: 1,
      message: 'OK',
      token: expect.stringMatching(/^[0-9A-Za-z]{43}$/),
      token_id: expect.stringMatching(/^\d+$/),
      allowed_ips: ['10.0.0.0/8'],
      // Full access unless asked otherwise, as every SMSFactor token.
      scope: 'full',
    });
    const list = await call(h().app, 'GET', '/token', { token: a.token });
    expect(list.raw).not.toContain(a.token);
    expect(list.raw).not.toContain(second.body.token);
    const wall = (ms: number) => wallTime(h().config.TIMEZONE, ms);
    expect(list.body.tokens).toEqual([
      {
        api_token_id: expect.stringMatching(/^\d+$/),
        name: 'default',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        expired_at: null,
        ttl: null,
        is_active: 1,
        allowed_ips: [],
        // The listing itself used the default token: it was last used now.
        last_used_at: wall(h().clock.now()),
        scope: 'full',
      },
      {
        api_token_id: second.body.token_id,
        name: 'second',
        created_at: wall(createdAt),
        expired_at: wall(createdAt + 3_600_000),
        ttl: 3600,
        is_active: 1,
        allowed_ips: ['10.0.0.0/8'],
        last_used_at: null,
        scope: 'full',
      },
    ]);
    const one = await call(h().app, 'GET', `/token/${second.body.token_id}`, { token: a.token });
    expect(one.body).toEqual({ status: 1, message: 'OK', token: list.body.tokens[1] });

    // Expired, it is listed as inactive.
    h().clock.advance(3_600_000);
    const later = await call(h().app, 'GET', `/token/${second.body.token_id}`, { token: a.token });
    expect(later.body.token).toMatchObject({
      is_active: 0,
      ttl: 3600,
      expired_at: wall(createdAt + 3_600_000),
    });

    const xml = await call(h().app, 'GET', '/token', { token: a.token, accept: 'application/xml' });
    expect(xml.body.status).toBe('1');
    expect(xml.body.tokens[1]).toEqual({
      api_token_id: second.body.token_id,
      name: 'second',
      created_at: wall(createdAt),
      expired_at: wall(createdAt + 3_600_000),
      ttl: '3600',
      is_active: '0',
      allowed_ips: '10.0.0.0/8',
      last_used_at: '',
      scope: 'full',
    });
    const xmlOne = await call(h().app, 'GET', `/token/${second.body.token_id}`, {
      token: a.token,
      accept: 'application/xml',
    });
    expect(xmlOne.body.token).toEqual(xml.body.tokens[1]);
    const xmlCreated = await call(h().app, 'POST', '/token', {
      token: a.token,
      xml: '<token><name>x</name><allowed_ips>10.1.0.0/16</allowed_ips><allowed_ips>::1</allowed_ips></token>',
    });
    expect(xmlCreated.body).toMatchObject({ status: '1', allowed_ips: ['10.1.0.0/16', '::1'] });
  });

  it('a parent creates tokens for its own sub-accounts only', async () => {
    const parent = await h().account();
    const child = await h().account({ parentId: parent.id });
    const stranger = await h().account();
    const forChild = await call(h().app, 'POST', `/token/account/${child.id}`, {
      token: parent.token,
      json: { token: { name: 'child' } },
    });
    expect(forChild.body.status).toBe(1);
    const tokens = await call(h().app, 'GET', '/token', { token: forChild.body.token });
    expect(tokens.body.tokens.map((t: { name: string }) => t.name)).toEqual(['default', 'child']);
    for (const [token, target] of [
      [parent.token, stranger.id],
      [child.token, parent.id],
      [parent.token, 999999],
    ] as const) {
      const refused = await call(h().app, 'POST', `/token/account/${target}`, {
        token,
        json: { token: { name: 'x' } },
      });
      expect(refused.body).toMatchObject({ status: -5 });
    }
    const xml = await call(h().app, 'POST', `/token/account/${child.id}`, {
      token: parent.token,
      xml: '<token><name>child xml</name></token>',
    });
    expect(xml.body).toMatchObject({ status: '1', token_id: expect.stringMatching(/^\d+$/) });
  });

  it('a token stored with an expiry past year 9999 (before ttl was capped) still reads: its dates are clamped, it still signs in', async () => {
    const a = await h().account();
    // Expiries an older Pigeon could store from a huge ttl: a five-digit year, past the last JavaScript date,
    // the largest 64-bit integer, and on SQLite (which keeps a float where an integer overflows) 1e300.
    const expiries = [
      String(Date.UTC(10_000, 0, 1)),
      '8640000000000001',
      '9223372036854775807',
      ...(h().dialect === 'sqlite' ? ['1e300'] : []),
    ];
    const createdAt = h().clock.now();
    const ids: string[] = [];
    const tokens: string[] = [];
    for (const expiry of expiries) {
      const created = await call(h().app, 'POST', '/token', {
        token: a.token,
        json: { token: { name: `until ${expiry}`, ttl: 60 } },
      });
      expect(created.body.status).toBe(1);
      await h()
        .deps.store.db.updateTable('tokens')
        .set({ expires_at: sql<number>`${sql.raw(expiry)}` })
        .where('id', '=', Number(created.body.token_id))
        .execute();
      ids.push(created.body.token_id);
      tokens.push(created.body.token);
    }
    // The last second the `Y-m-d H:i:s` form can write, in TIMEZONE; the ttl agrees with it.
    const lastWallMs = Date.UTC(9999, 11, 31, 22, 59, 59); // 23:59:59 in Paris
    expect(h().config.TIMEZONE).toBe('Europe/Paris');
    const clamped = {
      expired_at: '9999-12-31 23:59:59',
      ttl: Math.round((lastWallMs - createdAt) / 1000),
      is_active: 1,
    };
    const list = await call(h().app, 'GET', '/token', { token: a.token });
    expect(list.httpCode).toBe(200);
    expect(list.body.status).toBe(1);
    for (const id of ids) {
      expect(list.body.tokens.find((t: { api_token_id: string }) => t.api_token_id === id)).toMatchObject(
        clamped,
      );
      const one = await call(h().app, 'GET', `/token/${id}`, { token: a.token });
      expect(one.httpCode, id).toBe(200);
      expect(one.body, id).toMatchObject({ status: 1, token: { api_token_id: id, ...clamped } });
      const xml = await call(h().app, 'GET', `/token/${id}`, { token: a.token, accept: 'application/xml' });
      expect(xml.body, id).toMatchObject({
        status: '1',
        token: { expired_at: clamped.expired_at, ttl: String(clamped.ttl) },
      });
    }
    // The stored expiry itself is untouched: far in the future, the tokens still sign in.
    h().clock.advance(366 * 24 * 3_600_000);
    for (const token of tokens) {
      expect((await call(h().app, 'GET', '/credits', { token })).body.status).toBe(1);
    }
  });
});
