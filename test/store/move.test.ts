// `pigeon move`: a SQLite database filled through the real paths (accounts and a sub-account, tokens, lists,
// campaigns with links, clicks, replies and multi-part messages, webhooks with their deliveries and attempts,
// invoices, the ledger, idempotency keys, a console session…) is copied into a fresh PostgreSQL schema; a
// Pigeon started on that schema answers every read as the SQLite one did, its tokens still authenticate, and
// its next ids follow the old ones. Every table of the database is copied and counted, so a table added later
// and not moved fails here. A target that holds data, or a source a worker still serves, is refused with
// nothing written.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { type Db, openStore, withAdvisoryLock } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { type MoveLine, moveToPostgres } from '../../src/store/move.ts';
import { tableNames } from '../../src/store/schema.ts';
import { pigeonOn } from '../helpers/cli.ts';
import { call, createHarness, type Harness, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveringSimulator, testDeliveryWorker, testDispatcher } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };
const pgUrl = inject('pgUrl');

/** A fresh schema of the shared PostgreSQL server, dropped after the file. */
function freshSchema(): { url: string; drop: () => Promise<void> } {
  const schema = `mv_${randomBytes(6).toString('hex')}`;
  return {
    url: `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}schema=${schema}`,
    drop: () =>
      withAdvisoryLock(pgUrl, async () => {
        const client = new pg.Client({ connectionString: pgUrl });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      }),
  };
}

/** The tables the database holds (Kysely's own left out): what a move must copy. */
async function databaseTables(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master
    where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' order by name`.execute(db);
  return rows.map((r) => r.name);
}

type Line = Record<string, unknown>;
const lines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

describe('the tables a move visits', () => {
  it('are every table a migrated database holds: a table a migration adds and schema.ts does not list fails here', async () => {
    const store = await openStore(':memory:');
    try {
      await migrate(store);
      expect([...tableNames].sort()).toEqual(await databaseTables(store.db));
    } finally {
      await store.destroy();
    }
  });
});

describe.skipIf(!pgUrl)('pigeon move (SQLite to PostgreSQL)', () => {
  let h: Harness;
  let target: { url: string; drop: () => Promise<void> };
  let a: TestAccount;
  let subToken: string;
  let tickets: number[];
  let webhookId: string;
  let listId: string;
  let invoiceId: string;

  async function send(token: string, body: object, headers: Record<string, string> = {}, path = '/send') {
    const r = await call(h.app, 'POST', path, { token, json: body, headers });
    expect(r.body.status, r.body.details).toBe(1);
    return Number(r.body.ticket);
  }

  /** Fills every table through the real paths; the rest (state a running server leaves) as it leaves it. */
  async function world(): Promise<void> {
    const worker = testDeliveryWorker(h, deliveringSimulator(), {}, quiet);
    await worker.start();
    const receiver = await new WebhookReceiver().listen();
    try {
      a = await h.account({ credits: 5000 });
      // An account with limits of its own, paced: its one send books its parts (account_pacing), due at once.
      const paced = await h.account({ credits: 10 });
      await h.deps.services.limits.set('cli', paced.id, { parts_per_second: 10, countries: 'all' });
      await send(paced.token, {
        sms: { message: { text: 'Paced' }, recipients: { gsm: [{ value: '33612345999' }] } },
      });
      const sub = await call(h.app, 'POST', '/account', {
        token: a.token,
        json: {
          account: { email: `sub-${a.id}@example.com`, password: 'long enough pw', phone: '+33611111111' },
        },
      });
      expect(sub.body.status, sub.body.details).toBe(1);
      subToken = (await h.deps.services.tokens.createTokenForCli(Number(sub.body.id), 'sub')).token;
      const transfer = await call(h.app, 'POST', '/account/transfer', {
        token: a.token,
        json: { transfer: { to_account: Number(sub.body.id), credits: 50 } },
      });
      expect(transfer.body.status, transfer.body.details).toBe(1);
      invoiceId = String((await h.deps.services.invoices.purchase(a.id, 100, { price: '2.50' })).invoice_id);
      const token = await call(h.app, 'POST', '/token', { token: a.token, json: { token: { name: 'ci' } } });
      expect(token.body.status, token.body.details).toBe(1);
      for (const [path, body] of [
        ['/webhook', { webhook: { type: 'DLR', url: `http://127.0.0.1:${receiver.port}/dlr` } }],
        ['/webhook', { webhook: { type: 'MO', url: `http://127.0.0.1:${receiver.port}/mo` } }],
        ['/blacklist', { blacklist: { contacts: { gsm: [{ value: '33600000001' }] } } }],
        ['/npai', { npai: { contacts: { gsm: [{ value: '33600000002' }] } } }],
        ['/lookup', { lookup: { to: ['33612345678'] } }],
      ] as const) {
        const r = await call(h.app, 'POST', path, { token: a.token, json: body });
        expect(r.body.status, `${path}: ${r.body.details}`).toBe(1);
        if (path === '/webhook' && body.webhook.type === 'DLR') webhookId = String(r.body.webhook.webhook_id);
      }
      for (const [method, path, body] of [
        ['PUT', '/retention', { retention: { message: '6m' } }],
        [
          'PUT',
          '/notification/balance',
          {
            notification: {
              alert_trigger: '100000',
              alert_email: '0',
              alert_gsm: '1',
              email: '',
              phone_number: '33622222222',
            },
          },
        ],
      ] as const) {
        const r = await call(h.app, method, path, { token: a.token, json: body });
        expect(r.body.status, `${path}: ${r.body.details}`).toBe(1);
      }
      const list = await call(h.app, 'POST', '/list', {
        token: a.token,
        json: {
          list: {
            name: 'customers',
            contacts: { gsm: [{ value: '33612345001', info1: 'Ann' }, { value: '33612345002' }] },
          },
        },
      });
      expect(list.body.status, list.body.details).toBe(1);
      listId = String(list.body.id);

      tickets = [
        await send(
          a.token,
          {
            sms: {
              message: { text: 'Your order: <-short->', links: ['https://example.com/orders'] },
              recipients: { gsm: [{ value: '33612345678', gsmsmsid: 'o-1' }, { value: '33612345679' }] },
            },
          },
          { 'idempotency-key': 'first-send' },
        ),
        await send(
          a.token,
          { sms: { message: { text: `A long one ${'x'.repeat(300)}` }, lists: [{ value: listId }] } },
          {},
          '/send/lists',
        ),
        await send(subToken, {
          sms: {
            message: { text: 'Hello from the sub-account' },
            recipients: { gsm: [{ value: '33612345680' }] },
          },
        }),
      ];
      await waitFor(async () => {
        const rows = await h.deps.store.db.selectFrom('messages').select('state').execute();
        return rows.every((m) => m.state === 'delivered');
      }, 'every message delivered');

      const { replies, links, clickFold } = h.deps.services;
      await replies.recordInbound({ from: '+33612345678', to: 'PIGEON', text: 'Thanks!' });
      await replies.recordInbound({ from: '33612345679', to: 'PIGEON', text: 'STOP' });
      await replies.recordInbound({ from: '33612345678', to: 'PIGEON', text: 'HELP' });
      await replies.recordInbound({
        from: '33612345001',
        to: 'PIGEON',
        text: 'Half ',
        part: { ref: 7, total: 2, seq: 1 },
      });
      const [linked] = await h.deps.store.db
        .selectFrom('messages')
        .select('text')
        .where('campaign_id', '=', tickets[0])
        .where('seq', '=', 0)
        .execute();
      const target = await links.resolve(linked.text.split('/').pop()!);
      const visit = {
        head: false,
        headers: { 'user-agent': 'Mozilla/5.0 (iPhone)' },
        address: '198.51.100.7',
      };
      expect(await links.recordVisit(target!, visit)).toBe('counted');
      await clickFold.foldClicks(100);

      const dispatcher = testDispatcher(h, quiet);
      dispatcher.start();
      await waitFor(async () => {
        const open = await h.deps.store.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('state', '!=', 'delivered')
          .execute();
        return open.length === 0 && receiver.requests.length >= 4;
      }, 'the webhooks delivered');
      await dispatcher.stop();
      const signIn = await call(h.app, 'POST', '/console/session', {
        json: {
          email: (
            await h.deps.store.db
              .selectFrom('accounts')
              .select('email')
              .where('id', '=', a.id)
              .executeTakeFirstOrThrow()
          ).email,
          password: 'correct horse battery',
        },
      });
      expect(signIn.httpCode, signIn.raw).toBe(200);
    } finally {
      await worker.stop();
      await receiver.close();
    }
    // What a server leaves behind that the paths above do not: a carrier's receipt for no known message, a
    // stopped worker's lapsed lease term and its connector's last status.
    const { db } = h.deps.store;
    const now = h.clock.now();
    await db
      .insertInto('orphan_receipts')
      .values({ smsc_id: 'unknown-1', stat: 'DELIVRD', err: '000', received_at: now })
      .execute();
    await db
      .insertInto('lease_holders')
      .values({
        queue: 'messages',
        host: 'old-host',
        pid: 42,
        started_at: now - 60_000,
        lease_until: now - 30_000,
      })
      .execute();
    await db
      .insertInto('connector_status')
      .values({
        name: 'default',
        instance: 'old-host:42',
        role: 'delivery',
        kind: 'simulator',
        binds_up: 1,
        binds_total: 1,
        state: 'bound',
        window_in_use: 0,
        window_size: 10,
        pps: 12.5,
        last_error: null,
        last_error_at: null,
        updated_at: now - 30_000,
      })
      .execute();
    // A user's two-factor recovery codes (their hashes), one used.
    const [owner] = await db.selectFrom('users').select('id').where('account_id', '=', a.id).execute();
    await db
      .insertInto('user_recovery_codes')
      .values([
        { user_id: owner.id, code_hash: 'a'.repeat(64), used_at: null },
        { user_id: owner.id, code_hash: 'b'.repeat(64), used_at: now },
      ])
      .execute();
    // The SMPP server's: a user, a campaign one of its submits became (and an earlier part's id), a receipt
    // waiting for its bind.
    const smppUser = await h.deps.services.smppUsers.createForAccount(a.id, {
      system_id: 'mover',
      password: 'pw',
    });
    const [user] = await db
      .selectFrom('smpp_users')
      .select('id')
      .where('system_id', '=', smppUser.system_id)
      .execute();
    const [campaign] = await db.selectFrom('campaigns').select('id').limit(1).execute();
    await db
      .insertInto('smpp_submits')
      .values({
        campaign_id: campaign.id,
        smpp_user_id: user.id,
        source_addr: 'MyShop',
        registered_delivery: 1,
        part_ids: null,
        text_head: 'Hello',
        created_at: now,
      })
      .execute();
    await db
      .insertInto('smpp_parts')
      .values({ part_id: 1_780_000_000_000_000, campaign_id: campaign.id, created_at: now })
      .execute();
    await db
      .insertInto('smpp_outbox')
      .values({
        smpp_user_id: user.id,
        kind: 'receipt',
        source_addr: '33612345678',
        destination_addr: 'MyShop',
        text: 'id:1 sub:001 dlvrd:001 submit date:2601050900 done date:2601050900 stat:DELIVRD err:003 text:Hello',
        message_id: String(campaign.id),
        message_state: 2,
        created_at: now,
        expires_at: now + 60_000,
      })
      .execute();
    await db
      .insertInto('smpp_binds')
      .values({ smpp_user_id: user.id, server: 'a-server', bound_at: now, alive_until: now + 15_000 })
      .execute();
    // The operator's prices: the instance's list and the account's (one credit to France, as without them).
    await h.deps.services.prices.set(undefined, 'FR,1\n');
    await h.deps.services.prices.set(a.id, 'FR,1\n4474,3\n');
    // Moderation's: an operator account, a sender ID asked for, a content rule.
    const { moderation } = h.deps.services;
    await moderation.grantOperator('cli', a.id);
    await moderation.requestSender(
      { accountId: a.id, tokenId: 0, parentId: null },
      { sender: 'MyShop', note: 'the shop' },
    );
    await moderation.addRule('cli', { kind: 'domain', value: 'spam.example', action: 'refuse' });
  }

  beforeAll(async () => {
    h = await createHarness('sqlite', {
      DAILY_MESSAGE_LIMIT: '100000',
      MONTHLY_MESSAGE_LIMIT: '100000',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      HELP_TEXT: 'Reply STOP to stop.',
    });
    target = freshSchema();
    await world();
  });
  afterAll(async () => {
    await h?.close();
    await target?.drop();
  });

  let moved: Line[] = [];

  it('copies every table of the database, counts each on both sides, checks the ledger and says so', async () => {
    const tables = await databaseTables(h.deps.store.db);
    const result = await pigeonOn(h.databaseUrl, 'move', '--to', target.url);
    expect(result.code, result.stderr).toBe(0);
    moved = lines(result.stdout);
    const perTable = moved.filter((l) => 'table' in l);
    // Every table the database holds is reported, and was filled by the world above: an uncopied one fails.
    expect(perTable.map((l) => l.table).sort()).toEqual(tables);
    for (const line of perTable) {
      expect(line.ok, JSON.stringify(line)).toBe(true);
      expect(line.source, `${line.table} has rows to move`).toBeGreaterThan(0);
      expect(line.target).toBe(line.source);
    }
    const ledger = moved.find((l) => l.check === 'ledger')!;
    expect(ledger).toMatchObject({ accounts: 3, ok: true, differences: [] });
    expect(ledger.credits).toBe(ledger.ledger_sum);
    expect(moved.at(-1)).toMatchObject({ moved: true, tables: tables.length, ok: true });
  });

  describe('a Pigeon started on the PostgreSQL schema', () => {
    let deps: Deps;
    let app: App;
    beforeAll(async () => {
      expect(moved.length, 'the move ran').toBeGreaterThan(0);
      const config = loadConfig({
        DATABASE_URL: target.url,
        LOG_LEVEL: 'silent',
        RATE_LIMIT_IP_RPS: '0',
        RATE_LIMIT_AUTH_FAILURES: '0',
      });
      deps = await createDeps(config, { clock: h.clock, logger: pino({ level: 'silent' }) });
      app = buildApi({ config, logger: deps.logger, services: deps.services });
      await app.ready();
    });
    afterAll(async () => {
      await app?.close();
      await deps?.close();
    });

    it('answers every read as the SQLite one did, with the same tokens', async () => {
      const reads = [
        '/credits',
        '/account',
        '/sub-accounts',
        '/token',
        '/webhook',
        `/webhook/${webhookId}/deliveries`,
        '/lists',
        `/list/${listId}`,
        '/blacklist',
        '/npai',
        '/campaigns',
        '/messages',
        '/messages/mo',
        '/retention',
        '/notification/balance',
        '/account/invoice',
        `/account/invoice/${invoiceId}`,
        ...tickets
          .slice(0, 2)
          .flatMap((t) => [
            `/campaign/${t}`,
            `/campaign/${t}/messages`,
            `/campaign/${t}/clicks`,
            `/campaign/${t}/mo`,
          ]),
      ];
      const subReads = [
        '/credits',
        '/account',
        `/campaign/${tickets[2]}`,
        `/campaign/${tickets[2]}/messages`,
      ];
      for (const [token, paths] of [
        [a.token, reads],
        [subToken, subReads],
      ] as const) {
        for (const path of paths) {
          const before = await call(h.app, 'GET', path, { token });
          const after = await call(app, 'GET', path, { token });
          expect(before.body.status, `${path}: ${before.raw}`).toBe(1);
          expect(after.body, path).toEqual(before.body);
        }
      }
    });

    it('a new send gets a ticket and message ids above the old ones, and is debited on the moved ledger', async () => {
      const { db } = h.deps.store;
      const oldMessage = await db
        .selectFrom('messages')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow();
      const creditsBefore = (await call(app, 'GET', '/credits', { token: a.token })).body.credits;
      const r = await call(app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: { message: { text: 'After the move' }, recipients: { gsm: [{ value: '33612345690' }] } },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      expect(Number(r.body.ticket)).toBeGreaterThan(Math.max(...tickets));
      const [message] = await deps.store.db
        .selectFrom('messages')
        .select('id')
        .where('campaign_id', '=', Number(r.body.ticket))
        .execute();
      expect(message.id).toBeGreaterThan(Number(oldMessage.id));
      expect((await call(app, 'GET', '/credits', { token: a.token })).body.credits).toBe(creditsBefore - 1);
      // The same Idempotency-Key answers the first send's ticket: the keys moved too.
      const retried = await call(app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Your order: <-short->', links: ['https://example.com/orders'] },
            recipients: { gsm: [{ value: '33612345678', gsmsmsid: 'o-1' }, { value: '33612345679' }] },
          },
        },
        headers: { 'idempotency-key': 'first-send' },
      });
      expect(Number(retried.body.ticket)).toBe(tickets[0]);
    });

    it('refuses to move into a database that holds Pigeon data, writing nothing', async () => {
      const counts = async () =>
        (await sql<{ n: string }>`select count(*)::text as n from accounts`.execute(deps.store.db)).rows[0].n;
      const before = await counts();
      const again = await pigeonOn(h.databaseUrl, 'move', '--to', target.url);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(
        /already holds Pigeon data \(account_limits, account_pacing, accounts, .*\): nothing was written/,
      );
      expect(again.stdout).toBe('');
      expect(await counts()).toBe(before);
    });
  });
});

describe.skipIf(!pgUrl)('pigeon move refuses', () => {
  it('while a worker still serves the SQLite database (its lease term runs), writing nothing', async () => {
    const h = await createHarness('sqlite');
    const target = freshSchema();
    try {
      await h.deps.store.db
        .insertInto('lease_holders')
        .values({
          queue: 'messages',
          host: 'busy-host',
          pid: 7,
          started_at: Date.now(),
          lease_until: Date.now() + 600_000,
        })
        .execute();
      const result = await pigeonOn(h.databaseUrl, 'move', '--to', target.url);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('a Pigeon process still serves this database');
      expect(result.stderr).toContain('stop the server');
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      const schema = new URL(target.url).searchParams.get('schema');
      const tables = await client.query(
        'select count(*)::int as n from information_schema.tables where table_schema = $1',
        [schema],
      );
      await client.end();
      expect(tables.rows[0].n).toBe(0);
    } finally {
      await h.close();
      await target.drop();
    }
  });

  it('a target that is not PostgreSQL or cannot be reached, or a source that is PostgreSQL or missing, with a clear message', async () => {
    const h = await createHarness('sqlite');
    try {
      const toFile = await pigeonOn(h.databaseUrl, 'move', '--to', '/tmp/other.db');
      expect(toFile.code).toBe(1);
      expect(toFile.stderr).toContain('--to must be a PostgreSQL URL');
      const fromPg = await pigeonOn(pgUrl, 'move', '--to', pgUrl);
      expect(fromPg.code).toBe(1);
      expect(fromPg.stderr).toContain('DATABASE_URL is already PostgreSQL');
      const unreachable = await pigeonOn(
        h.databaseUrl,
        'move',
        '--to',
        'postgres://pigeon:secret@127.0.0.1:1/none',
      );
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toContain(
        'cannot reach the target database postgres://pigeon:***@127.0.0.1:1/none',
      );
      expect(unreachable.stderr).not.toContain('secret');
      const noSource = await pigeonOn(`${h.databaseUrl}.missing`, 'move', '--to', pgUrl);
      expect(noSource.code).toBe(1);
      expect(noSource.stderr).toContain('no SQLite database at');
      const noTarget = await pigeonOn(h.databaseUrl, 'move');
      expect(noTarget.code).toBe(2);
      expect(noTarget.stderr).toContain('move needs --to');
    } finally {
      await h.close();
    }
  }, 60_000);
});

describe.skipIf(!pgUrl)('pigeon move in keyset pages', () => {
  it('pages of one row still move every row, ids kept, into a database a Pigeon already migrated (and left empty)', async () => {
    const h = await createHarness('sqlite');
    const target = freshSchema();
    try {
      const a = await h.account({ credits: 100 });
      const r = await call(h.app, 'POST', '/send', {
        token: a.token,
        json: {
          sms: {
            message: { text: 'Paged' },
            recipients: { gsm: ['33612340001', '33612340002', '33612340003'].map((value) => ({ value })) },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      // A Pigeon started once on the target, with nothing done: only its migrations' own rows (a cursor).
      const started = await openStore(target.url);
      await migrate(started);
      await started.destroy();
      const reported: MoveLine[] = [];
      expect(
        await moveToPostgres(h.databaseUrl, target.url, { pageRows: 1, report: (l) => reported.push(l) }),
      ).toBe(true);
      expect(reported.find((l) => 'table' in l && l.table === 'messages')).toMatchObject({
        source: 3,
        target: 3,
      });
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      const schema = new URL(target.url).searchParams.get('schema');
      const moved = await client.query(`select id::int as id, recipient from ${schema}.messages order by id`);
      await client.end();
      const source = await h.deps.store.db
        .selectFrom('messages')
        .select(['id', 'recipient'])
        .orderBy('id')
        .execute();
      expect(moved.rows).toEqual(source);
    } finally {
      await h.close();
      await target.drop();
    }
  });
});
