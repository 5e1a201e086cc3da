// The audit log: every change made through the API writes exactly one entry naming its actor, action and the
// client's address, in the change's transaction; sign-ins are recorded, failed ones too; GET /audit reads a
// parent's entries and its sub-accounts', never another tenant's.
import type { RouteOptions } from 'fastify';
import type { Selectable } from 'kysely';
import { expect, it } from 'vitest';
import { buildApi } from '../../src/runtime.ts';
import type { AuditLogTable } from '../../src/store/schema.ts';
import { pigeonOn } from '../helpers/cli.ts';
import { call, describeEachDialect, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

const ip = '203.0.113.24';

/** Entries written after entry `afterId`, oldest first. */
async function entriesAfter(h: Harness, afterId: number): Promise<Selectable<AuditLogTable>[]> {
  const rows = await h.deps.store.db
    .selectFrom('audit_log')
    .selectAll()
    .where('id', '>', afterId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), account_id: Number(r.account_id) }));
}

async function lastId(h: Harness): Promise<number> {
  const row = await h.deps.store.db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** A request from `ip` (inject's own address is 127.0.0.1). */
async function from(
  h: Harness,
  method: string,
  url: string,
  options: { token?: string; json?: unknown; headers?: Record<string, string> } = {},
  remoteAddress = ip,
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await h.app.inject({
    method: method as 'GET',
    url,
    headers,
    payload: options.json === undefined ? undefined : JSON.stringify(options.json),
    remoteAddress,
  });
  return { body: JSON.parse(response.body), headers: response.headers };
}

/** Every route the app registers, seen by an onRoute hook added before the app loads its plugins. */
async function registeredRoutes(h: Harness): Promise<string[]> {
  const app = buildApi({ config: h.config, logger: h.deps.logger, services: h.deps.services });
  const routes: string[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      routes.push(`${method} ${route.url}`);
    }
  });
  await app.ready();
  await app.close();
  return routes;
}

/** GET routes that change something: they are audited like the other methods. */
const changingGets = new Set(['GET /send', 'GET /account/:id/lock', 'GET /account/:id/unlock']);
/** Routes of other methods that change nothing, and why. */
const unchanging = new Map([
  ['POST /send/simulate', 'a simulation stores nothing'],
  ['POST /send/lists/simulate', 'a simulation stores nothing'],
  ['POST /console/session', 'covered by the sign-in tests below (it has no token)'],
  ['PUT /console/session/account', 'covered by the sign-in tests below (it needs a session)'],
  ['DELETE /console/session', 'covered by the sign-in tests below (it needs a session)'],
  ['POST /users', 'covered in test/users/users.test.ts (an invitation needs SMTP_URL)'],
  ['POST /users/accept', 'covered in test/users/users.test.ts (it needs an e-mailed link)'],
  ['POST /users/forgot', 'covered in test/users/recovery.test.ts (its entry is written after the answer)'],
  [
    'POST /console/session/code',
    'a sign-in step: its session.sign_in is covered in test/users/two-factor.test.ts',
  ],
  ['PUT /users/me/password', "a user's own profile (no token may call it): test/users/recovery.test.ts"],
  ['POST /users/me/two-factor', "a user's own profile (no token may call it): test/users/two-factor.test.ts"],
  [
    'POST /users/me/two-factor/recovery-codes',
    "a user's own profile (no token may call it): test/users/two-factor.test.ts",
  ],
  ['PUT /users/me/two-factor', "a user's own profile (no token may call it): test/users/two-factor.test.ts"],
  [
    'DELETE /users/me/two-factor',
    "a user's own profile (no token may call it): test/users/two-factor.test.ts",
  ],
  ['DELETE /users/me/sessions', "a user's own profile (no token may call it): test/users/recovery.test.ts"],
  [
    'DELETE /users/me/sessions/:id',
    "a user's own profile (no token may call it): test/users/recovery.test.ts",
  ],
]);

const message = { text: 'Hello', sender: 'Pigeon' };
const sendBody = (number: string) => ({ sms: { message, recipients: { gsm: [{ value: number }] } } });

describeEachDialect('audit log', (h) => {
  /** One changing route's request, made ready by whatever it needs first, and the entry it must write. */
  interface Case {
    route: string;
    action: string;
    objectType: string | null;
    request(): Promise<{ method: string; url: string; json?: unknown; token: string }>;
  }

  async function fixture() {
    const parent = await h().account({ credits: 1000 });
    const sub = await h().account({ credits: 10, parentId: parent.id });
    const tokenId = (await call(h().app, 'GET', '/token', { token: parent.token })).body.tokens[0]
      .api_token_id;
    const post = (url: string, json: unknown) => call(h().app, 'POST', url, { token: parent.token, json });
    const webhook = async () =>
      (await post('/webhook', { webhook: { type: 'DLR', url: 'https://p.example/dlr' } })).body.webhook
        .webhook_id;
    const list = async () =>
      (
        await post('/list', {
          list: { name: 'l', contacts: { gsm: [{ value: '33612345601' }, { value: '33612345601' }] } },
        })
      ).body.id;
    const contact = async () => {
      const id = await list();
      return (await call(h().app, 'GET', `/list/${id}`, { token: parent.token })).body.list[0].id;
    };
    const ticket = async () => (await post('/send', sendBody('33612345602'))).body.ticket;
    // The parent is also an operator account, for the /operator/* routes.
    const { moderation } = h().deps.services;
    await moderation.grantOperator('cli', parent.id);
    const senderRequest = async (sender: string) =>
      (await moderation.requestSender({ accountId: parent.id, tokenId: 0, parentId: null }, { sender })).id;
    const rule = async (action: 'refuse' | 'hold', value = `w${Date.now()}x`) =>
      (await moderation.addRule('cli', { account_id: String(parent.id), kind: 'word', value, action })).id;
    /** A campaign a holding rule of the parent's held for moderation (each with a word of its own). */
    let held = 0;
    const heldTicket = async () => {
      const word = `holdme${++held}x`;
      await rule('hold', word);
      const sent = await post('/send', {
        sms: {
          message: { ...message, text: `Hello ${word}` },
          recipients: { gsm: [{ value: `3361234570${held}` }] },
        },
      });
      expect(sent.body.moderation).toBe('pending');
      return sent.body.ticket;
    };
    return { parent, sub, tokenId, post, webhook, list, contact, ticket, senderRequest, rule, heldTicket };
  }

  it('every changing route writes exactly one entry: its action, object, actor (the token, named) and IP', async () => {
    const f = await fixture();
    const t = f.parent.token;
    const cases: Case[] = [
      {
        route: 'POST /send',
        action: 'campaign.send',
        objectType: 'campaign',
        request: async () => ({ method: 'POST', url: '/send', json: sendBody('33612345603'), token: t }),
      },
      {
        route: 'GET /send',
        action: 'campaign.send',
        objectType: 'campaign',
        request: async () => ({ method: 'GET', url: `/send?text=Hi&to=33612345604&token=${t}`, token: '' }),
      },
      {
        route: 'POST /send/lists',
        action: 'campaign.send',
        objectType: 'campaign',
        request: async () => ({
          method: 'POST',
          url: '/send/lists',
          json: { sms: { message, lists: [{ value: await f.list() }] } },
          token: t,
        }),
      },
      {
        route: 'DELETE /send/:ticket',
        action: 'campaign.cancel',
        objectType: 'campaign',
        request: async () => {
          const ticket = (
            await f.post('/send', {
              sms: {
                message: { ...message, delay: '2099-01-01 10:00:00' },
                recipients: { gsm: [{ value: '33612345605' }] },
              },
            })
          ).body.ticket;
          return { method: 'DELETE', url: `/send/${ticket}`, token: t };
        },
      },
      {
        route: 'PUT /campaign/:ticket/npai',
        action: 'blacklist.add_npai',
        objectType: 'campaign',
        request: async () => ({ method: 'PUT', url: `/campaign/${await f.ticket()}/npai`, token: t }),
      },
      {
        route: 'POST /account',
        action: 'account.create',
        objectType: 'account',
        request: async () => ({
          method: 'POST',
          url: '/account',
          json: { account: { email: `s${Date.now()}@example.com`, password: 'sub-account-pw', isChild: 1 } },
          token: t,
        }),
      },
      {
        route: 'GET /account/:id/lock',
        action: 'account.lock',
        objectType: 'account',
        request: async () => ({ method: 'GET', url: `/account/${f.sub.id}/lock`, token: t }),
      },
      {
        route: 'GET /account/:id/unlock',
        action: 'account.unlock',
        objectType: 'account',
        request: async () => ({ method: 'GET', url: `/account/${f.sub.id}/unlock`, token: t }),
      },
      {
        route: 'POST /account/transfer',
        action: 'credits.transfer',
        objectType: 'account',
        request: async () => ({
          method: 'POST',
          url: '/account/transfer',
          json: { transfer: { to_account: String(f.sub.id), credits: '5' } },
          token: t,
        }),
      },
      {
        route: 'POST /token',
        action: 'token.create',
        objectType: 'token',
        request: async () => ({ method: 'POST', url: '/token', json: { token: { name: 'ci' } }, token: t }),
      },
      {
        route: 'POST /token/account/:accountID',
        action: 'token.create',
        objectType: 'token',
        request: async () => ({
          method: 'POST',
          url: `/token/account/${f.sub.id}`,
          json: { token: { name: 'sub ci' } },
          token: t,
        }),
      },
      {
        route: 'DELETE /token/:id',
        action: 'token.delete',
        objectType: 'token',
        request: async () => {
          const id = (await f.post('/token', { token: { name: 'gone' } })).body.token_id;
          return { method: 'DELETE', url: `/token/${id}`, token: t };
        },
      },
      {
        route: 'PUT /notification/balance',
        action: 'notification.update',
        objectType: 'notification',
        request: async () => ({
          method: 'PUT',
          url: '/notification/balance',
          json: { notification: { alert_trigger: '7' } },
          token: t,
        }),
      },
      {
        route: 'POST /webhook',
        action: 'webhook.create',
        objectType: 'webhook',
        request: async () => ({
          method: 'POST',
          url: '/webhook',
          json: { webhook: { type: 'MO', url: 'https://p.example/mo' } },
          token: t,
        }),
      },
      {
        route: 'PUT /webhook/:id',
        action: 'webhook.update',
        objectType: 'webhook',
        request: async () => ({
          method: 'PUT',
          url: `/webhook/${await f.webhook()}`,
          json: { webhook: { url: 'https://p.example/other' } },
          token: t,
        }),
      },
      {
        route: 'PUT /webhook/:id/status',
        action: 'webhook.pause',
        objectType: 'webhook',
        request: async () => ({
          method: 'PUT',
          url: `/webhook/${await f.webhook()}/status`,
          json: { webhook: { status: 'paused' } },
          token: t,
        }),
      },
      {
        route: 'DELETE /webhook/:id',
        action: 'webhook.delete',
        objectType: 'webhook',
        request: async () => ({ method: 'DELETE', url: `/webhook/${await f.webhook()}`, token: t }),
      },
      {
        route: 'POST /webhook/:id/test',
        action: 'webhook.test',
        objectType: 'webhook',
        request: async () => ({ method: 'POST', url: `/webhook/${await f.webhook()}/test`, token: t }),
      },
      {
        route: 'POST /list',
        action: 'list.create',
        objectType: 'list',
        request: async () => ({
          method: 'POST',
          url: '/list',
          json: { list: { name: 'new', contacts: { gsm: [{ value: '33612345606' }] } } },
          token: t,
        }),
      },
      {
        route: 'DELETE /list/:id',
        action: 'list.delete',
        objectType: 'list',
        request: async () => ({ method: 'DELETE', url: `/list/${await f.list()}`, token: t }),
      },
      {
        route: 'PUT /list/deduplicate/:id',
        action: 'list.deduplicate',
        objectType: 'list',
        request: async () => ({ method: 'PUT', url: `/list/deduplicate/${await f.list()}`, token: t }),
      },
      {
        route: 'PUT /list/:id/npai/clear',
        action: 'list.clear_npai',
        objectType: 'list',
        request: async () => ({ method: 'PUT', url: `/list/${await f.list()}/npai/clear`, token: t }),
      },
      {
        route: 'DELETE /list/contact/:id',
        action: 'contact.delete',
        objectType: 'contact',
        request: async () => ({ method: 'DELETE', url: `/list/contact/${await f.contact()}`, token: t }),
      },
      {
        route: 'PUT /list/contact/:id',
        action: 'contact.update',
        objectType: 'contact',
        request: async () => ({
          method: 'PUT',
          url: `/list/contact/${await f.contact()}`,
          json: { contact: { info1: 'x' } },
          token: t,
        }),
      },
      {
        route: 'POST /blacklist',
        action: 'blacklist.add',
        objectType: 'blacklist',
        request: async () => ({
          method: 'POST',
          url: '/blacklist',
          json: { blacklist: { contacts: { gsm: [{ value: '33612345607' }] } } },
          token: t,
        }),
      },
      {
        route: 'DELETE /blacklist/contact/:id',
        action: 'blacklist.remove',
        objectType: 'blacklist',
        request: async () => {
          await f.post('/blacklist', { blacklist: { contacts: { gsm: [{ value: '33612345608' }] } } });
          const id = (await call(h().app, 'GET', '/blacklist', { token: t })).body.list[0].id;
          return { method: 'DELETE', url: `/blacklist/contact/${id}`, token: t };
        },
      },
      {
        route: 'POST /npai',
        action: 'npai.add',
        objectType: 'npai',
        request: async () => ({
          method: 'POST',
          url: '/npai',
          json: { npai: { contacts: { gsm: [{ value: '33612345609' }] } } },
          token: t,
        }),
      },
      {
        route: 'DELETE /npai/contact/:id',
        action: 'npai.remove',
        objectType: 'npai',
        request: async () => {
          await f.post('/npai', { npai: { contacts: { gsm: [{ value: '33612345610' }] } } });
          const id = (await call(h().app, 'GET', '/npai', { token: t })).body.list[0].id;
          return { method: 'DELETE', url: `/npai/contact/${id}`, token: t };
        },
      },
      {
        route: 'POST /lookup',
        action: 'lookup.run',
        objectType: 'lookup',
        request: async () => ({
          method: 'POST',
          url: '/lookup',
          json: { lookup: { to: ['33612345678'] } },
          token: t,
        }),
      },
      {
        route: 'PUT /retention',
        action: 'retention.update',
        objectType: 'retention',
        request: async () => ({
          method: 'PUT',
          url: '/retention',
          json: { retention: { message: '90d' } },
          token: t,
        }),
      },
      {
        route: 'POST /erase',
        action: 'number.erase',
        objectType: 'number',
        request: async () => ({
          method: 'POST',
          url: '/erase',
          json: { erase: { number: '33655501234' } },
          token: t,
        }),
      },
      {
        route: 'POST /smpp/user',
        action: 'smpp_user.create',
        objectType: 'smpp_user',
        request: async () => ({
          method: 'POST',
          url: '/smpp/user',
          json: { smpp_user: { system_id: `a${f.parent.id}`, password: 'pw12' } },
          token: t,
        }),
      },
      {
        route: 'DELETE /smpp/user/:system_id',
        action: 'smpp_user.delete',
        objectType: 'smpp_user',
        request: async () => {
          await f.post('/smpp/user', { smpp_user: { system_id: `d${f.parent.id}`, password: 'pw12' } });
          return { method: 'DELETE', url: `/smpp/user/d${f.parent.id}`, token: t };
        },
      },
      {
        route: 'PUT /users/:id',
        action: 'user.change_role',
        objectType: 'user',
        request: async () => {
          const added = await h().deps.services.users.operatorAdd(
            f.parent.id,
            `r${f.parent.id}@example.com`,
            'viewer',
          );
          return { method: 'PUT', url: `/users/${added.id}`, json: { user: { role: 'sender' } }, token: t };
        },
      },
      {
        route: 'DELETE /users/:id',
        action: 'user.remove',
        objectType: 'user',
        request: async () => {
          const added = await h().deps.services.users.operatorAdd(
            f.parent.id,
            `d${f.parent.id}@example.com`,
            'viewer',
          );
          return { method: 'DELETE', url: `/users/${added.id}`, token: t };
        },
      },
      {
        route: 'POST /sender',
        action: 'sender.request',
        objectType: 'sender',
        request: async () => ({
          method: 'POST',
          url: '/sender',
          json: { sender: { sender: 'Shop1' } },
          token: t,
        }),
      },
      {
        route: 'PUT /operator/sender/:id/approve',
        action: 'sender.approve',
        objectType: 'sender',
        request: async () => ({
          method: 'PUT',
          url: `/operator/sender/${await f.senderRequest('Shop2')}/approve`,
          token: t,
        }),
      },
      {
        route: 'PUT /operator/sender/:id/refuse',
        action: 'sender.refuse',
        objectType: 'sender',
        request: async () => ({
          method: 'PUT',
          url: `/operator/sender/${await f.senderRequest('Shop3')}/refuse`,
          token: t,
        }),
      },
      {
        route: 'POST /operator/rule',
        action: 'rule.add',
        objectType: 'rule',
        request: async () => ({
          method: 'POST',
          url: '/operator/rule',
          json: {
            rule: { account_id: String(f.parent.id), kind: 'word', value: 'zzqqxx', action: 'refuse' },
          },
          token: t,
        }),
      },
      {
        route: 'DELETE /operator/rule/:id',
        action: 'rule.delete',
        objectType: 'rule',
        request: async () => ({
          method: 'DELETE',
          url: `/operator/rule/${await f.rule('refuse')}`,
          token: t,
        }),
      },
      {
        route: 'PUT /operator/campaign/:id/approve',
        action: 'campaign.approve',
        objectType: 'campaign',
        request: async () => ({
          method: 'PUT',
          url: `/operator/campaign/${await f.heldTicket()}/approve`,
          token: t,
        }),
      },
      {
        route: 'PUT /operator/campaign/:id/refuse',
        action: 'campaign.refuse',
        objectType: 'campaign',
        request: async () => ({
          method: 'PUT',
          url: `/operator/campaign/${await f.heldTicket()}/refuse`,
          token: t,
        }),
      },
      {
        route: 'PUT /operator/accounts/:id/limits',
        action: 'account.limits',
        objectType: 'account',
        request: async () => ({
          method: 'PUT',
          url: `/operator/accounts/${f.parent.id}/limits`,
          json: { limits: { countries: 'all' } },
          token: t,
        }),
      },
      {
        route: 'DELETE /operator/accounts/:id/limits',
        action: 'account.limits',
        objectType: 'account',
        request: async () => ({
          method: 'DELETE',
          url: `/operator/accounts/${f.parent.id}/limits`,
          token: t,
        }),
      },
    ];

    // Every registered route that changes something has its case (or says why it has none).
    const routes = await registeredRoutes(h());
    const changing = routes.filter(
      (r) =>
        !r.startsWith('HEAD ') &&
        (!r.startsWith('GET ') || changingGets.has(r)) &&
        !r.startsWith('GET /docs') &&
        !r.startsWith('GET /console'),
    );
    const covered = new Set(cases.map((c) => c.route));
    expect(changing.filter((r) => !covered.has(r) && !unchanging.has(r))).toEqual([]);
    expect([...covered].filter((r) => !routes.includes(r))).toEqual([]);

    for (const c of cases) {
      const request = await c.request();
      const before = await lastId(h());
      const answer = await from(h(), request.method, request.url, {
        token: request.token || undefined,
        json: request.json,
      });
      expect(answer.body.status, `${c.route}: ${answer.body.details}`).toBe(1);
      const written = await entriesAfter(h(), before);
      // An erasure covers the caller and its sub-accounts: one entry for each account it erased from.
      const erasedFrom: string[] | undefined = answer.body.accounts;
      expect(written, c.route).toHaveLength(c.route === 'POST /erase' ? 3 : 1);
      if (c.route === 'POST /erase') expect(written.map((e) => String(e.account_id))).toEqual(erasedFrom);
      expect(written[0], c.route).toMatchObject({
        account_id: f.parent.id,
        action: c.action,
        object_type: c.objectType,
        actor_kind: 'token',
        actor_id: String(f.tokenId),
        actor_label: 'default',
        ip,
      });
    }
  });

  it('a change rolled back leaves no entry: a send refused for credits, a transfer past the balance', async () => {
    const poor = await h().account({ credits: 0 });
    const sub = await h().account({ credits: 0, parentId: poor.id });
    const before = await lastId(h());
    expect(
      (await from(h(), 'POST', '/send', { token: poor.token, json: sendBody('33612345611') })).body.status,
    ).toBe(-3);
    const transfer = { transfer: { to_account: String(sub.id), credits: '50' } };
    expect(
      (await from(h(), 'POST', '/account/transfer', { token: poor.token, json: transfer })).body.status,
    ).toBe(-3);
    // Concurrent sends written as one group (on PostgreSQL, together): the one that cannot pay leaves nothing.
    const rich = await h().account({ credits: 1 });
    const both = await Promise.all([
      from(h(), 'POST', '/send', { token: rich.token, json: sendBody('33612345612') }),
      from(h(), 'POST', '/send', { token: rich.token, json: sendBody('33612345613') }),
    ]);
    expect(both.map((b) => b.body.status).sort()).toEqual([-3, 1]);
    const written = await entriesAfter(h(), before);
    expect(written.map((e) => [e.account_id, e.action])).toEqual([
      [rich.id, 'account.create'],
      [rich.id, 'campaign.send'],
    ]);
  });

  it('sends that share a group transaction each write their own entry, naming their own campaign', async () => {
    const a = await h().account({ credits: 100 });
    const before = await lastId(h());
    const sent = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        from(h(), 'POST', '/send', {
          token: a.token,
          json: sendBody(`336123457${String(i).padStart(2, '0')}`),
        }),
      ),
    );
    expect(sent.map((s) => s.body.status)).toEqual(Array(12).fill(1));
    const written = await entriesAfter(h(), before);
    expect(written.map((e) => e.action)).toEqual(Array(12).fill('campaign.send'));
    expect(new Set(written.map((e) => e.object_id))).toEqual(new Set(sent.map((s) => String(s.body.ticket))));
    expect(new Set(written.map((e) => `${e.account_id} ${e.actor_kind} ${e.ip}`))).toEqual(
      new Set([`${a.id} token ${ip}`]),
    );
  });

  it('console sign-ins are recorded, failed ones too, with the e-mail tried and the address', async () => {
    const email = `console-${Date.now()}@example.com`;
    const created = await h().deps.services.accounts.createAccount({
      email,
      password: 'correct horse battery',
    });
    const accountId = Number(created.account_id);
    const before = await lastId(h());
    const wrong = await from(h(), 'POST', '/console/session', { json: { email, password: 'wrong horse' } });
    expect(wrong.body.status).toBe(-1);
    // An e-mail of no account has no account to write to.
    const nobody = await from(h(), 'POST', '/console/session', {
      json: { email: 'nobody@example.com', password: 'x' },
    });
    expect(nobody.body.status).toBe(-1);
    // A failed sign-in's entry is written after its answer.
    await waitFor(async () => (await entriesAfter(h(), before)).length === 1, 'the failed sign-in entry');
    const right = await from(h(), 'POST', '/console/session', {
      json: { email, password: 'correct horse battery' },
    });
    expect(right.body.status).toBe(1);
    const cookie = String(right.headers['set-cookie']).split(';')[0];
    const csrf = right.body.session.csrf_token;
    const sessionHeaders = { cookie, 'x-csrf-token': csrf };
    // A change made with the session: its actor is the user who signed in (the account's owner), named by its
    // e-mail; the failed sign-in names the e-mail tried, no user.
    const hook = await from(h(), 'POST', '/webhook', {
      json: { webhook: { type: 'DLR', url: 'https://c.example/dlr' } },
      headers: sessionHeaders,
    });
    expect(hook.body.status).toBe(1);
    const out = await from(h(), 'DELETE', '/console/session', { headers: sessionHeaders });
    expect(out.body.status).toBe(1);
    const written = await entriesAfter(h(), before);
    const tried = { actor_kind: 'user', actor_id: null, actor_label: email, ip, account_id: accountId };
    const user = { ...tried, actor_id: String(right.body.session.user_id) };
    expect(written).toMatchObject([
      { ...tried, action: 'session.sign_in_failed' },
      { ...user, action: 'session.sign_in' },
      { ...user, action: 'webhook.create', object_type: 'webhook' },
      { ...user, action: 'session.sign_out' },
    ]);
  });

  it("the operator's CLI and Pigeon itself are actors too", async () => {
    const before = await lastId(h());
    // No API caller in the server's process: Pigeon's own work (here the harness's account creation).
    const a = await h().account();
    // The `pigeon` command, in its own process on the same database: the CLI's.
    for (const args of [
      ['account', 'lock', String(a.id)],
      ['account', 'unlock', String(a.id)],
      ['credits', 'add', String(a.id), '5'],
      ['token', 'create', String(a.id), '--name', 'ops'],
      ['account', 'postpaid', String(a.id), '--limit', '10'],
      ['account', 'limits', String(a.id), '--daily', '5'],
    ]) {
      const ran = await pigeonOn(h().databaseUrl, ...args);
      expect(ran.code, ran.stderr).toBe(0);
    }
    const written = await entriesAfter(h(), before);
    const cli = { account_id: a.id, actor_kind: 'cli', actor_id: null, ip: null };
    expect(written).toMatchObject([
      { account_id: a.id, action: 'account.create', actor_kind: 'pigeon', ip: null },
      { ...cli, action: 'account.lock', object_id: String(a.id) },
      { ...cli, action: 'account.unlock', object_id: String(a.id) },
      { ...cli, action: 'credits.add' },
      { ...cli, action: 'token.create', object_type: 'token' },
      { ...cli, action: 'account.postpaid', object_type: 'account', object_id: String(a.id) },
      { ...cli, action: 'account.limits', object_type: 'account', object_id: String(a.id) },
    ]);
  });

  it("GET /audit: a parent sees its sub-accounts' entries, not another tenant's; sub_account_id, filters and paging", async () => {
    const parent = await h().account({ credits: 100 });
    const sub = await h().account({ credits: 100, parentId: parent.id });
    const other = await h().account({ credits: 100 });
    await call(h().app, 'POST', '/send', { token: parent.token, json: sendBody('33612345614') });
    h().clock.advance(2 * 86_400_000);
    await call(h().app, 'POST', '/send', { token: sub.token, json: sendBody('33612345615') });
    await call(h().app, 'POST', '/webhook', {
      token: sub.token,
      json: { webhook: { type: 'DLR', url: 'https://s.example/dlr' } },
    });
    await call(h().app, 'POST', '/send', { token: other.token, json: sendBody('33612345616') });

    const read = (token: string, query: Record<string, string> = {}, accept?: string) =>
      call(h().app, 'GET', '/audit', { token, query, accept });
    const all = await read(parent.token);
    expect(all.body.status).toBe(1);
    expect(all.body.totalRecords).toBe(5);
    // Newest first, each naming its account.
    expect(
      all.body.entries.map((e: { account_id: string; action: string }) => [e.account_id, e.action]),
    ).toEqual([
      [String(sub.id), 'webhook.create'],
      [String(sub.id), 'campaign.send'],
      [String(parent.id), 'campaign.send'],
      [String(sub.id), 'account.create'],
      [String(parent.id), 'account.create'],
    ]);
    expect(all.body.entries[0]).toMatchObject({
      actor: { kind: 'token', label: 'default' },
      object: { type: 'webhook' },
      ip: '127.0.0.1',
    });
    // The sub-account sees its own only; the other tenant none of theirs.
    expect((await read(sub.token)).body.totalRecords).toBe(3);
    expect((await read(other.token)).body.entries.map((e: { action: string }) => e.action)).toEqual([
      'campaign.send',
      'account.create',
    ]);
    // sub_account_id: that sub-account alone; -5 for any other account.
    expect((await read(parent.token, { sub_account_id: String(sub.id) })).body.totalRecords).toBe(3);
    for (const id of [String(other.id), String(parent.id), 'x']) {
      expect((await read(parent.token, { sub_account_id: id })).body.status).toBe(-5);
    }
    expect((await read(sub.token, { sub_account_id: String(parent.id) })).body.status).toBe(-5);
    // Filters: an action, its family, an actor, a period of days in TIMEZONE.
    expect((await read(parent.token, { action: 'campaign.send' })).body.totalRecords).toBe(2);
    expect((await read(parent.token, { action: 'webhook' })).body.totalRecords).toBe(1);
    expect((await read(parent.token, { actor: 'pigeon' })).body.totalRecords).toBe(2);
    expect((await read(parent.token, { actor: 'token' })).body.totalRecords).toBe(3);
    const subToken = all.body.entries[0].actor.id;
    expect((await read(parent.token, { actor: `token:${subToken}` })).body.totalRecords).toBe(2);
    const day = (ms: number) => new Date(ms).toLocaleDateString('sv-SE', { timeZone: h().config.TIMEZONE });
    const today = day(h().clock.now());
    expect((await read(parent.token, { date_start: today })).body.totalRecords).toBe(2);
    expect(
      (await read(parent.token, { date_end: day(h().clock.now() - 86_400_000) })).body.totalRecords,
    ).toBe(3);
    // Paging.
    const page = await read(parent.token, { start: '1', length: '2' });
    expect(page.body.totalRecords).toBe(5);
    expect(page.body.entries.map((e: { id: string }) => e.id)).toEqual(
      all.body.entries.slice(1, 3).map((e: { id: string }) => e.id),
    );
    // Bad input: -7 naming the parameter.
    for (const [name, value] of [
      ['date_start', '2026-13-01'],
      ['date_end', 'yesterday'],
      ['actor', 'robot'],
      ['actor', 'token:x'],
      ['action', 'DROP TABLE'],
      ['length', '0'],
      ['start', '-1'],
    ]) {
      const bad = await read(parent.token, { [name]: value });
      expect(bad.body.status, `${name}=${value}`).toBe(-7);
      expect(bad.body.details).toContain(name);
    }
    // XML as every route.
    const xml = await read(parent.token, { length: '1' }, 'application/xml');
    expect(xml.contentType).toContain('xml');
    expect(xml.body).toMatchObject({ status: '1', totalRecords: '5' });
    expect(xml.raw).toContain('<action>webhook.create</action>');
  });

  it("retention deletes the entries older than the account's campaign setting, and no one else's", async () => {
    const a = await h().account({ credits: 100 });
    const b = await h().account({ credits: 100 });
    await call(h().app, 'POST', '/send', { token: a.token, json: sendBody('33612345617') });
    h().clock.advance(40 * 86_400_000);
    await call(h().app, 'PUT', '/retention', { token: a.token, json: { retention: { campaign: '30d' } } });
    const before = (await call(h().app, 'GET', '/audit', { token: a.token })).body.totalRecords;
    expect(before).toBe(3);
    const deleted = await h().deps.services.retention.runOnce();
    expect(deleted.audit).toBe(2);
    const left = await call(h().app, 'GET', '/audit', { token: a.token });
    expect(left.body.entries.map((e: { action: string }) => e.action)).toEqual(['retention.update']);
    expect((await call(h().app, 'GET', '/audit', { token: b.token })).body.totalRecords).toBe(1);
  });
});
