// Idempotency-Key on POST /send, GET /send and POST /send/lists: a retry answers the first answer without
// sending or charging again, in one process or across two on one database (two app instances in this
// process, and two real `pigeon serve` processes on PostgreSQL).
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { idempotencyRepo } from '../../src/idempotency/idempotency.repo.ts';
import { createIdempotencyService } from '../../src/idempotency/idempotency.service.ts';
import { requestHash } from '../../src/idempotency/request-hash.ts';
import { pigeonBin } from '../helpers/cli.ts';
import { call, describeEachDialect, type Harness, type TestAccount } from '../helpers/harness.ts';
import { type SecondInstance, secondInstance } from '../helpers/second-instance.ts';
import { waitFor } from '../helpers/wait.ts';

const fr = (n: number) => `336${String(12345600 + n).padStart(8, '0')}`;
const hour = 3_600_000;

const body = (text = 'Hello', numbers = [fr(1), fr(2)]) => ({
  sms: { message: { text, pushtype: 'alert' }, recipients: { gsm: numbers.map((value) => ({ value })) } },
});

const post = (app: Harness['app'], a: TestAccount, key: string | undefined, json: unknown, path = '/send') =>
  call(app, 'POST', path, {
    token: a.token,
    json,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });

async function campaignsOf(h: Harness, a: TestAccount) {
  return h.deps.store.db
    .selectFrom('campaigns')
    .select(['id', 'cost'])
    .where('account_id', '=', a.id)
    .orderBy('id')
    .execute();
}

async function debitsOf(h: Harness, a: TestAccount) {
  return h.deps.store.db
    .selectFrom('credit_ledger')
    .select(['delta'])
    .where('account_id', '=', a.id)
    .where('reason', '=', 'campaign')
    .execute();
}

/** What the service hashes of a POST /send: the message and the recipients, as it receives them. */
const sendHash = (json: ReturnType<typeof body>) =>
  requestHash('POST /send', { message: json.sms.message, recipients: json.sms.recipients.gsm });

const credits = (h: Harness, a: TestAccount) => h.deps.services.credits.credits(a.id);

const keyRow = (h: Harness, a: TestAccount, key: string) =>
  h.deps.store.db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', a.id)
    .where('key', '=', key)
    .executeTakeFirst();

describeEachDialect('Idempotency-Key', (h) => {
  const others: SecondInstance[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    for (const other of others) await other.close();
  });

  it('the same key with the same body answers the first answer again, with one campaign and one debit', async () => {
    const a = await h().account({ credits: 100 });
    const first = await post(h().app, a, 'order-42', body());
    expect(first.body).toMatchObject({ status: 1, sent: 2, cost: 2, credits: 98 });
    // The retry serializes its fields in another order: the same request all the same.
    const retry = await post(h().app, a, 'order-42', {
      sms: {
        recipients: { gsm: [{ value: fr(1) }, { value: fr(2) }] },
        message: { pushtype: 'alert', text: 'Hello' },
      },
    });
    expect(retry.httpCode).toBe(first.httpCode);
    expect(retry.raw).toBe(first.raw);
    expect(await campaignsOf(h(), a)).toHaveLength(1);
    expect(await debitsOf(h(), a)).toEqual([{ delta: -2 }]);
    expect(await credits(h(), a)).toBe(98);
  });

  it('the first answer is replayed in the format the retry asks for', async () => {
    const a = await h().account();
    const first = await post(h().app, a, 'xml-retry', body());
    const retry = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: body(),
      accept: 'application/xml',
      headers: { 'idempotency-key': 'xml-retry' },
    });
    expect(retry.contentType).toContain('application/xml');
    expect(retry.body.ticket).toBe(first.body.ticket);
    expect(retry.body.credits).toBe(String(first.body.credits));
    expect(await campaignsOf(h(), a)).toHaveLength(1);
  });

  it('the same key with another body, or on another route, is -7 naming the key, and sends nothing', async () => {
    const a = await h().account({ credits: 100 });
    await post(h().app, a, 'k-1', body('Hello'));
    const other = await post(h().app, a, 'k-1', body('Hello again'));
    expect(other.body).toEqual({
      status: -7,
      message: 'Data error',
      details: expect.stringMatching(
        /^Idempotency-Key "k-1" was already used in the last 24 hours for another POST \/send request/,
      ),
    });
    const get = await call(h().app, 'GET', '/send', {
      token: a.token,
      query: { text: 'Hello', to: fr(1) },
      headers: { 'idempotency-key': 'k-1' },
    });
    expect(get.body.status).toBe(-7);
    expect(get.body.details).toContain('for a POST /send request, not GET /send');
    expect(await campaignsOf(h(), a)).toHaveLength(1);
    expect(await credits(h(), a)).toBe(98);
  });

  it("keys belong to their account: another account's request with the same key is its own", async () => {
    const a = await h().account();
    const b = await h().account();
    const forA = await post(h().app, a, 'shared-key', body());
    const forB = await post(h().app, b, 'shared-key', body('Another text'));
    expect(forB.body.status).toBe(1);
    expect(forB.body.ticket).not.toBe(forA.body.ticket);
    expect(await campaignsOf(h(), b)).toHaveLength(1);
  });

  it('concurrent POSTs with one key make one campaign and one debit, and all answer the same', async () => {
    const a = await h().account({ credits: 100 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(h().app, a, 'burst', body())));
    for (const r of answers) {
      expect(r.httpCode).toBe(200);
      expect(r.raw).toBe(answers[0].raw);
    }
    expect(answers[0].body).toMatchObject({ status: 1, sent: 2 });
    expect(await campaignsOf(h(), a)).toHaveLength(1);
    expect(await debitsOf(h(), a)).toHaveLength(1);
    expect(await credits(h(), a)).toBe(98);
  });

  it('two Pigeon instances on one database: concurrent POSTs with one key make one campaign and one debit', async () => {
    const other = await secondInstance(h());
    others.push(other);
    const a = await h().account({ credits: 100 });
    for (const round of [1, 2, 3]) {
      const key = `two-instances-${round}`;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          post(i % 2 === 0 ? h().app : other.app, a, key, body(`Round ${round}`)),
        ),
      );
      for (const r of answers) expect(r.raw).toBe(answers[0].raw);
      expect(answers[0].body.status).toBe(1);
    }
    expect(await campaignsOf(h(), a)).toHaveLength(3);
    expect(await debitsOf(h(), a)).toHaveLength(3);
    expect(await credits(h(), a)).toBe(94);
  });

  it('a retry arriving while another process runs the first waits for it and answers its answer', async () => {
    const a = await h().account();
    const db = h().deps.store.db;
    const now = h().clock.now();
    // Another process has claimed the key and is storing its campaign (its lease is still running).
    await db
      .insertInto('idempotency_keys')
      .values({
        account_id: a.id,
        key: 'in-flight',
        route: 'POST /send',
        request_hash: sendHash(body()),
        state: 'running',
        claim: 'other-process',
        lease_until: now + 10_000,
        status: null,
        http_code: null,
        response: null,
        created_at: now,
      })
      .execute();
    const reads = vi.spyOn(idempotencyRepo, 'find');
    let answered = false;
    const retry = post(h().app, a, 'in-flight', body()).finally(() => {
      answered = true;
    });
    // The retry has read the claim more than once: it is waiting. Then the other process commits its answer.
    await waitFor(() => reads.mock.calls.length >= 3, 'the retry to poll the claim');
    expect(answered).toBe(false);
    const first = {
      ...{ ticket: '777', cost: 2, credits: 998, total: 2, sent: 2, blacklisted: 0, duplicated: 0 },
      ...{ invalid: 0, npai: 0, not_allowed: 0 },
    };
    await db
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        claim: null,
        lease_until: null,
        status: 1,
        http_code: 200,
        response: JSON.stringify(first),
      })
      .where('account_id', '=', a.id)
      .where('key', '=', 'in-flight')
      .execute();
    const r = await retry;
    expect(r.body).toMatchObject({ status: 1, ...first });
    // It never ran the send itself.
    expect(await campaignsOf(h(), a)).toHaveLength(0);
  });

  it('a first request whose process died (its lease ran out) is run by the retry, once', async () => {
    const a = await h().account({ credits: 100 });
    const db = h().deps.store.db;
    const now = h().clock.now();
    await db
      .insertInto('idempotency_keys')
      .values({
        account_id: a.id,
        key: 'crashed',
        route: 'POST /send',
        request_hash: sendHash(body()),
        state: 'running',
        claim: 'dead-process',
        lease_until: now + 10_000,
        status: null,
        http_code: null,
        response: null,
        created_at: now,
      })
      .execute();
    const reads = vi.spyOn(idempotencyRepo, 'find');
    const retry = post(h().app, a, 'crashed', body());
    await waitFor(() => reads.mock.calls.length >= 2, 'the retry to wait on the claim');
    expect((await keyRow(h(), a, 'crashed'))?.claim).toBe('dead-process');
    // The lease lapses: the waiting retry takes the key over and sends.
    h().clock.advance(10_001);
    const r = await retry;
    expect(r.body).toMatchObject({ status: 1, sent: 2 });
    expect(await campaignsOf(h(), a)).toHaveLength(1);
    expect(await credits(h(), a)).toBe(98);
    expect(await post(h().app, a, 'crashed', body()).then((x) => x.raw)).toBe(r.raw);
  });

  it('a retry waits a bounded time for a first request that is still running, then answers 409 with Retry-After', async () => {
    const a = await h().account();
    const db = h().deps.store.db;
    const idempotency = createIdempotencyService({ db, clock: h().clock, options: { waitMs: 60 } });
    const request = { route: 'POST /send', payload: { n: 1 } };
    let ran = 0;
    let finished = false;
    const first = idempotency.once(a.id, 'slow', request, async () => {
      ran++;
      // The first request holds the key while the retry gives up waiting.
      await waitFor(() => finished, 'the retry to give up');
      return { ticket: '1' };
    });
    await waitFor(() => ran === 1, 'the first request to hold the key');
    const retry = await idempotency
      .once(a.id, 'slow', request, async () => ({ ticket: '2' }))
      .catch((e) => e);
    finished = true;
    expect(retry).toMatchObject({ status: -7, httpCode: 409, headers: { 'retry-after': '1' } });
    expect(retry.details).toContain('still running');
    expect(await first).toEqual({ ticket: '1' });
    expect(ran).toBe(1);
  });

  it('a send whose claim another request took over meanwhile rolls back: the campaign commits with its answer or not at all', async () => {
    const a = await h().account({ credits: 100 });
    const db = h().deps.store.db;
    const idempotency = createIdempotencyService({ db, clock: h().clock, options: { waitMs: 50 } });
    const json = body();
    const auth = { accountId: a.id, tokenId: 0, parentId: null };
    const taken = await idempotency
      .once(a.id, 'stolen', { route: 'POST /send', payload: {} }, async (record) => {
        // Its lease ran out while it worked: another request has taken the key over.
        await db
          .updateTable('idempotency_keys')
          .set({ claim: 'other-request' })
          .where('key', '=', 'stolen')
          .execute();
        return h().deps.services.sending.send(auth, json.sms.message, json.sms.recipients.gsm, {
          simulate: false,
          record,
        });
      })
      .catch((e) => e);
    // It waited for the other request's answer (which never comes here) instead of answering its own.
    expect(taken).toMatchObject({ status: -7, httpCode: 409 });
    expect(await campaignsOf(h(), a)).toHaveLength(0);
    expect(await credits(h(), a)).toBe(100);
  });

  it('a key reused after 24 hours sends again; just before, it still answers the first answer', async () => {
    const a = await h().account({ credits: 100 });
    const first = await post(h().app, a, 'daily-job', body());
    h().clock.advance(24 * hour - 1000);
    expect((await post(h().app, a, 'daily-job', body())).raw).toBe(first.raw);
    h().clock.advance(1000);
    const later = await post(h().app, a, 'daily-job', body());
    expect(later.body.status).toBe(1);
    expect(later.body.ticket).not.toBe(first.body.ticket);
    expect(await campaignsOf(h(), a)).toHaveLength(2);
    expect(await credits(h(), a)).toBe(96);
    // Expired, the key is free for another request too.
    h().clock.advance(24 * hour);
    expect((await post(h().app, a, 'daily-job', body('Another day'))).body.status).toBe(1);
  });

  it('GET /send with a key: the retry answers the first answer, whether the token is in the query or a header', async () => {
    const a = await h().account({ credits: 100 });
    const query = { text: 'Hello', to: fr(3), gsmsmsid: 'g-1' };
    const first = await call(h().app, 'GET', '/send', {
      query: { ...query, token: a.token },
      headers: { 'idempotency-key': 'get-1' },
    });
    expect(first.body).toMatchObject({ status: 1, sent: 1 });
    const retry = await call(h().app, 'GET', '/send', {
      token: a.token,
      query,
      headers: { 'idempotency-key': 'get-1' },
    });
    expect(retry.raw).toBe(first.raw);
    const changed = await call(h().app, 'GET', '/send', {
      token: a.token,
      query: { ...query, gsmsmsid: 'g-2' },
      headers: { 'idempotency-key': 'get-1' },
    });
    expect(changed.body.status).toBe(-7);
    expect(await campaignsOf(h(), a)).toHaveLength(1);
  });

  it('POST /send/lists with a key sends the lists once', async () => {
    const a = await h().account({ credits: 100 });
    const list = await call(h().app, 'POST', '/list', {
      token: a.token,
      json: { list: { name: 'vip', contacts: { gsm: [{ value: fr(4) }, { value: fr(5) }] } } },
    });
    const json = { sms: { message: { text: 'Hi' }, lists: [{ value: list.body.id }] } };
    const answers = await Promise.all([1, 2, 3].map(() => post(h().app, a, 'lists-1', json, '/send/lists')));
    expect(answers[0].body).toMatchObject({ status: 1, sent: 2 });
    for (const r of answers) expect(r.raw).toBe(answers[0].raw);
    expect(await campaignsOf(h(), a)).toHaveLength(1);
    expect(await credits(h(), a)).toBe(98);
  });

  it('a key that is empty, longer than 255 characters or not printable ASCII is -7, and nothing is sent', async () => {
    const a = await h().account();
    const cases: [string, RegExp][] = [
      ['', /Idempotency-Key is empty/],
      ['k'.repeat(256), /Idempotency-Key has 256 characters; at most 255/],
      ['caf\u00e9', /not printable ASCII at position 4/],
      ['tab\there', /not printable ASCII at position 4/],
    ];
    for (const [key, details] of cases) {
      const r = await post(h().app, a, key, body());
      expect({ key, status: r.body.status, httpCode: r.httpCode }).toEqual({
        key,
        status: -7,
        httpCode: 200,
      });
      expect(r.body.details).toMatch(details);
    }
    expect((await post(h().app, a, 'k'.repeat(255), body())).body.status).toBe(1);
    expect(await campaignsOf(h(), a)).toHaveLength(1);
  });

  it("a refusal of the request itself (-3, -7) is the key's answer; it is not run again", async () => {
    const a = await h().account({ credits: 1 });
    const refused = await post(h().app, a, 'too-dear', body());
    expect(refused.body.status).toBe(-3);
    await h().deps.services.credits.addCredits(a.id, 100, 'top-up');
    expect((await post(h().app, a, 'too-dear', body())).raw).toBe(refused.raw);
    const badType = {
      sms: { message: { text: 'Hi', pushtype: 'spam' }, recipients: { gsm: [{ value: fr(1) }] } },
    };
    const invalid = await post(h().app, a, 'bad-pushtype', badType);
    expect(invalid.body).toMatchObject({ status: -7, details: expect.stringContaining('pushtype') });
    expect((await post(h().app, a, 'bad-pushtype', badType)).raw).toBe(invalid.raw);
    expect(await campaignsOf(h(), a)).toHaveLength(0);
    // A new key is a new request.
    expect((await post(h().app, a, 'too-dear-2', body())).body.status).toBe(1);
  });

  it('without the header nothing is stored, and a simulation ignores the key', async () => {
    const a = await h().account();
    await post(h().app, a, undefined, body());
    await post(h().app, a, undefined, body());
    await post(h().app, a, 'simulated', body(), '/send/simulate');
    await post(h().app, a, 'simulated', body('Other'), '/send/simulate');
    const rows = await h()
      .deps.store.db.selectFrom('idempotency_keys')
      .select('key')
      .where('account_id', '=', a.id)
      .execute();
    expect(rows).toEqual([]);
    expect(await campaignsOf(h(), a)).toHaveLength(2);
  });

  it('/openapi.json documents the Idempotency-Key header on the three real sends, not on simulations', async () => {
    const document = (await call(h().app, 'GET', '/openapi.json')).body;
    const headerOf = (path: string, method: string) =>
      (document.paths[path][method].parameters ?? []).find(
        (p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key',
      );
    for (const [path, method] of [
      ['/send', 'post'],
      ['/send', 'get'],
      ['/send/lists', 'post'],
    ]) {
      expect(headerOf(path, method), `${method} ${path}`).toMatchObject({ required: false });
      expect(headerOf(path, method).description).toContain('24 h');
    }
    expect(headerOf('/send/simulate', 'post')).toBeUndefined();
  });

  it('pruneExpired deletes the keys older than 24 hours, in bounded batches, and keeps the others', async () => {
    const a = await h().account();
    const db = h().deps.store.db;
    await db.deleteFrom('idempotency_keys').execute();
    for (const key of ['old-1', 'old-2', 'old-3']) await post(h().app, a, key, body(key));
    h().clock.advance(24 * hour + 1);
    await post(h().app, a, 'fresh', body('fresh'));
    const idempotency = h().deps.services.idempotency;
    const now = h().clock.now();
    expect(await idempotency.pruneExpired(now, 2)).toBe(2);
    expect(await idempotency.pruneExpired(now, 2)).toBe(1);
    expect(await idempotency.pruneExpired(now, 2)).toBe(0);
    const left = await db.selectFrom('idempotency_keys').select('key').execute();
    expect(left.map((r) => r.key)).toEqual(['fresh']);
  });
});

describeEachDialect(
  'Idempotency-Key and transient failures',
  (h) => {
    it('a send refused because the queue is full (429) does not keep its key: the retry sends', async () => {
      const a = await h().account({ credits: 100 });
      const first = await post(h().app, a, undefined, body('fills the queue', [fr(1)]));
      expect(first.body.status).toBe(1);
      // The queue's depth is read again after half a second.
      h().clock.advance(1000);
      const refused = await post(h().app, a, 'after-429', body());
      expect(refused.httpCode).toBe(429);
      expect(await keyRow(h(), a, 'after-429')).toBeUndefined();
      // The queue drains (the first campaign is cancelled): the same key now sends.
      expect(
        (await call(h().app, 'DELETE', `/send/${first.body.ticket}`, { token: a.token })).body.status,
      ).toBe(1);
      h().clock.advance(1000);
      const retry = await post(h().app, a, 'after-429', body());
      expect(retry.body).toMatchObject({ status: 1, sent: 2 });
      expect(await campaignsOf(h(), a)).toHaveLength(2);
    });
  },
  { MAX_QUEUED_MESSAGES: '1' },
);

describeEachDialect('Idempotency-Key across real processes', (h) => {
  const children: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(
      children.map((child) =>
        child.exitCode === null && child.signalCode === null
          ? new Promise((resolve) => {
              child.once('exit', resolve);
              child.kill('SIGTERM');
            })
          : undefined,
      ),
    );
  });

  /** `pigeon serve` as an API process of its own on the harness's database: answers its API's URL. */
  function serve(): Promise<string> {
    const child = spawn(process.execPath, [pigeonBin, 'serve'], {
      env: {
        ...process.env,
        DATABASE_URL: h().databaseUrl,
        ROLE: 'api',
        PROCESSES: 'one',
        HOST: '127.0.0.1',
        PORT: '0',
        LINK_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    return new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'API listening' && entry.url) resolve(entry.url);
        } catch {
          // Not a log line.
        }
      });
      child.once('exit', (code) => reject(new Error(`pigeon serve exited with ${code} before listening`)));
    });
  }

  // Several processes share PostgreSQL; SQLite is the single-process default.
  it('two `pigeon serve` processes on one PostgreSQL schema: one key sent to both at once makes one campaign and one debit', async (ctx) => {
    if (h().dialect !== 'postgres') ctx.skip();
    const a = await h().account({ credits: 100 });
    const urls = await Promise.all([serve(), serve()]);
    expect(new Set(urls).size).toBe(2);
    const json = JSON.stringify(body('Two processes'));
    for (const round of [1, 2]) {
      const key = `two-processes-${round}`;
      // Four at once to each process, all started before any is answered.
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          fetch(`${urls[i % 2]}/send`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${a.token}`,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: json,
          }).then(async (r) => ({ httpCode: r.status, raw: await r.text() })),
        ),
      );
      for (const r of answers) {
        expect(r.httpCode).toBe(200);
        expect(r.raw).toBe(answers[0].raw);
      }
      expect(JSON.parse(answers[0].raw)).toMatchObject({ status: 1, sent: 2, cost: 2 });
    }
    expect(await campaignsOf(h(), a)).toHaveLength(2);
    expect(await debitsOf(h(), a)).toEqual([{ delta: -2 }, { delta: -2 }]);
    expect(await credits(h(), a)).toBe(96);
  }, 120_000);
});
