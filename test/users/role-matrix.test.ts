// Every registered API route against every role of a console user and every token scope, as the tenant
// matrix does for accounts: a caller's allowed routes never answer the permission refusal; every other route
// refuses it with the envelope (-1) before doing anything, even with real ids and valid bodies, so the
// database is the same after as before.
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { type Role, roles, type TokenScope, tokenScopes } from '../../src/shared/auth-context.ts';
import { tableNames } from '../../src/store/schema.ts';
import {
  type Permission,
  permissionOf,
  roleGrants,
  routePermissions,
  scopeGrants,
} from '../../src/users/permissions.ts';
import { type CallOptions, type CallResult, call, describeEachDialect } from '../helpers/harness.ts';
import { signedInUser } from './users-fixture.ts';

type Caller = (method: string, url: string, options?: CallOptions) => Promise<CallResult>;

const fr = (n: number) => `336${String(12345600 + n).padStart(8, '0')}`;
const refusal = /may not do this/;

/** Valid bodies for the routes that change things, so a missing refusal would show in the database. */
const bodies: Record<string, unknown> = {
  'POST /account': { account: { email: 'sub-matrix@example.com', password: 'long enough pw', isChild: 1 } },
  'POST /account/transfer': { transfer: { to_account: ':sub', credits: 5 } },
  'PUT /notification/balance': { notification: { alert_trigger: '77' } },
  'POST /token': { token: { name: 'matrix' } },
  'POST /token/account/:accountID': { token: { name: 'matrix' } },
  'POST /webhook': { webhook: { type: 'DLR', url: 'https://matrix.example/dlr' } },
  'PUT /webhook/:id': { webhook: { url: 'https://matrix.example/other' } },
  'PUT /webhook/:id/status': { webhook: { status: 'paused' } },
  'POST /send': { sms: { message: { text: 'matrix' }, recipients: { gsm: [{ value: fr(9) }] } } },
  'POST /list': { list: { name: 'matrix', contacts: { gsm: [{ value: fr(8) }] } } },
  'POST /blacklist': { blacklist: { contacts: { gsm: [{ value: fr(7) }] } } },
  'POST /npai': { npai: { contacts: { gsm: [{ value: fr(7) }] } } },
  'PUT /retention': { retention: { message: '6m' } },
  'POST /erase': { erase: { number: fr(1) } },
  'POST /smpp/user': { smpp_user: { system_id: 'matrix', password: 'pw12' } },
  'POST /users': { user: { email: 'invited-matrix@example.com', role: 'viewer' } },
  'PUT /users/:id': { user: { role: 'admin' } },
};

describeEachDialect('roles and token scopes over every API route', (h) => {
  /** An account holding one of everything a route can name, and the ids to name them. */
  async function accountWithEverything() {
    const owner = await h().account({ credits: 500 });
    const as = (method: string, url: string, json?: unknown) =>
      call(h().app, method, url, { token: owner.token, json });
    const sub = await as('POST', '/account', {
      account: {
        email: `sub-${randomBytes(4).toString('hex')}@example.com`,
        password: 'long enough pw',
        isChild: 1,
      },
    });
    const webhook = await as('POST', '/webhook', {
      webhook: { type: 'DLR', url: 'https://owner.example/dlr' },
    });
    const token = await as('POST', '/token', { token: { name: 'second' } });
    const list = await as('POST', '/list', { list: { name: 'L', contacts: { gsm: [{ value: fr(1) }] } } });
    const sent = await as('POST', '/send', {
      sms: { message: { text: 'hello' }, recipients: { gsm: [{ value: fr(2) }] } },
    });
    const smpp = await as('POST', '/smpp/user', {
      smpp_user: { system_id: `m${randomBytes(3).toString('hex')}`, password: 'pw12' },
    });
    const other = await h().deps.services.users.operatorAdd(
      owner.id,
      `spare-${randomBytes(4).toString('hex')}@example.com`,
      'viewer',
    );
    for (const answer of [sub, webhook, token, list, sent, smpp]) expect(answer.body.status).toBe(1);
    const ids = {
      sub: String(sub.body.id),
      webhook: String(webhook.body.webhook.webhook_id),
      token: String(token.body.token_id),
      list: String(list.body.id),
      ticket: String(sent.body.ticket),
      smpp: String(smpp.body.smpp_user.system_id),
      user: String(other.id),
    };
    return { owner, ids };
  }

  /** A route's URL naming the account's real things (`real`), or ids that exist nowhere. */
  function urlOf(url: string, ids: Record<string, string> | undefined): string {
    const id = (kind: string) => ids?.[kind] ?? '987654';
    let kind = 'none';
    if (url.startsWith('/webhook/')) kind = 'webhook';
    else if (
      url.startsWith('/token/account/') ||
      url.startsWith('/account/:id/') ||
      url.startsWith('/sub-accounts/')
    )
      kind = 'sub';
    else if (url.startsWith('/token/')) kind = 'token';
    else if (url.startsWith('/list/:id') || url.startsWith('/list/deduplicate/')) kind = 'list';
    else if (url.startsWith('/users/')) kind = 'user';
    return url
      .replace(':ticket', id('ticket'))
      .replace(':system_id', id('smpp'))
      .replace(/:accountID|:id/, id(kind));
  }

  function bodyOf(method: string, url: string, ids: Record<string, string> | undefined) {
    if (method === 'GET' || method === 'DELETE') return undefined;
    const body = bodies[`${method} ${url}`] ?? {};
    return ids ? JSON.parse(JSON.stringify(body).replace('":sub"', ids.sub)) : body;
  }

  /** Every row of every table, but the time tokens were last used (a read writes it). */
  async function snapshot(): Promise<string> {
    const db = h().deps.store.db;
    const tables: Record<string, string[]> = {};
    for (const table of tableNames) {
      const rows = await db.selectFrom(table).selectAll().execute();
      tables[table] = rows.map((row) => JSON.stringify({ ...row, last_used_at: undefined })).sort();
    }
    return JSON.stringify(tables);
  }

  async function checkMatrix(as: Caller, grants: ReadonlySet<Permission>, ids: Record<string, string>) {
    const routes = h().app.apiRoutes.filter((r) => r.method !== 'HEAD');
    const allowed = routes.filter((r) => grants.has(permissionOf(r.method, r.url)!));
    const refused = routes.filter((r) => !allowed.includes(r));

    const before = await snapshot();
    for (const { method, url } of refused) {
      const answer = await as(method, urlOf(url, ids), { json: bodyOf(method, url, ids) });
      expect(answer.body, `${method} ${url}`).toMatchObject({
        status: -1,
        message: 'Authentication error',
        details: expect.stringMatching(refusal),
      });
    }
    expect(await snapshot(), 'a refused request changes nothing').toBe(before);

    for (const { method, url } of allowed) {
      const answer = await as(method, urlOf(url, undefined), { json: bodyOf(method, url, undefined) });
      expect(String(answer.body?.details ?? ''), `${method} ${url}`).not.toMatch(refusal);
    }
    return { allowed: allowed.length, refused: refused.length };
  }

  it('every registered API route has a permission, and every permission names a registered route', () => {
    const routes = h().app.apiRoutes;
    const missing = routes.filter((r) => permissionOf(r.method, r.url) === undefined);
    expect(missing, 'routes without a permission in src/users/permissions.ts').toEqual([]);
    const registered = new Set(routes.map((r) => `${r.method} ${r.url}`));
    expect(Object.keys(routePermissions).filter((key) => !registered.has(key))).toEqual([]);
    // The users' routes are there, and the invitation's acceptance is outside authentication.
    expect(registered).toContain('DELETE /users/:id');
    expect(registered).not.toContain('POST /users/accept');
  });

  for (const role of roles) {
    it(`a console user with the role ${role} is refused, with nothing changed, every route its role lacks`, async () => {
      const { owner, ids } = await accountWithEverything();
      const user = await signedInUser(h(), owner.id, role as Role);
      const counts = await checkMatrix(user.call, roleGrants[role], ids);
      if (role === 'owner') expect(counts.refused).toBe(0);
      else expect(counts.refused).toBeGreaterThan(0);
    });
  }

  for (const scope of tokenScopes) {
    it(`a token of scope ${scope} is refused, with nothing changed, every route its scope lacks`, async () => {
      const { owner, ids } = await accountWithEverything();
      const created = await call(h().app, 'POST', '/token', {
        token: owner.token,
        json: { token: { name: scope, scope } },
      });
      expect(created.body).toMatchObject({ status: 1, scope });
      const token = created.body.token as string;
      const as: Caller = (method, url, options) => call(h().app, method, url, { ...options, token });
      const counts = await checkMatrix(as, scopeGrants[scope as TokenScope], ids);
      if (scope === 'full') expect(counts.refused).toBe(0);
      else expect(counts.refused).toBeGreaterThan(0);
    });
  }
});
