// Routes over several SMSCs at once (CONNECTORS_FILE): by prefix, country and sender; weighted sharing; the
// route and connector recorded on each message and shown by GET /messages and `pigeon messages`; recipients
// without a route counted in not_allowed and not charged; per-sender throughput; a bad file stops the start.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { readRoutingTable } from '../../src/delivery/routing/connectors-file.ts';
import { createTransport } from '../../src/delivery/transports.ts';
import { pigeonBin, pigeonOn } from '../helpers/cli.ts';
import {
  availableDialects,
  call,
  createHarness,
  type Harness,
  type TestAccount,
} from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };

for (const dialect of availableDialects()) {
  describe(`routing over several SMSCs [${dialect}]`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-routing-'));
    let h: Harness;
    let france: TestSmsc;
    let belgium: TestSmsc;
    let promo: TestSmsc;
    let shareA: TestSmsc;
    let shareB: TestSmsc;
    let account: TestAccount;
    const running: DeliveryWorker[] = [];

    beforeAll(async () => {
      [france, belgium, promo, shareA, shareB] = await Promise.all(
        [0, 1, 2, 3, 4].map(() => new TestSmsc().listen()),
      );
      const file = join(dir, 'connectors.yaml');
      writeFileSync(
        file,
        `# Several carriers: one per country, one for a sender, two sharing the Netherlands by weight.
connectors:
  - { name: orange, url: "${france.url}", window: 10 }
  - { name: proximus, url: "${belgium.url}" }
  - { name: promo-smsc, url: "${promo.url}" }
  - { name: share-a, url: "${shareA.url}" }
  - { name: share-b, url: "${shareB.url}" }
routes:
  - name: promotions
    match: { sender: [Promo] }
    connectors: [promo-smsc]
  - name: france
    match: { prefix: ["33"] }
    connectors: [orange]
  - name: belgium
    match: { country: [BE] }
    connectors: [proximus]
  - name: netherlands
    match: { prefix: ["31"] }
    connectors: [share-a, share-b]
    strategy: weighted
    weights: { share-a: 3, share-b: 1 }
  - name: throttled-sender
    match: { sender: [Slow] }
    connectors: [share-a]
senders:
  Slow: 10
`,
      );
      h = await createHarness(dialect, { CONNECTORS_FILE: file });
      account = await h.account({ credits: 100_000 });
    });

    afterEach(async () => {
      for (const worker of running.splice(0)) await worker.stop();
    });

    afterAll(async () => {
      await h?.close();
      await Promise.all([france, belgium, promo, shareA, shareB].map((s) => s?.close()));
      rmSync(dir, { recursive: true, force: true });
    });

    async function startWorker(table = h.deps.routing) {
      const transport = createTransport(h.config, quiet, undefined, table);
      const worker = testDeliveryWorker(h, transport, { batchSize: 200 });
      await worker.start();
      running.push(worker);
      await waitFor(() => transport.connectors.every((c) => c.transport.ready()), 'every connector bound');
      return worker;
    }

    async function send(numbers: string[], sender: string, text = 'Hello from Pigeon') {
      const r = await call(h.app, 'POST', '/send', {
        token: account.token,
        json: {
          sms: {
            message: { text, pushtype: 'alert', sender },
            recipients: { gsm: numbers.map((value) => ({ value })) },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return r.body as { ticket: string; cost: number; sent: number; not_allowed: number; credits: number };
    }

    const messagesOf = (ticket: string) =>
      h.deps.store.db
        .selectFrom('messages')
        .select(['id', 'recipient', 'state', 'dlr_status', 'connector', 'route'])
        .where('campaign_id', '=', Number(ticket))
        .orderBy('seq')
        .execute();

    const allFinal = (ticket: string) => async () =>
      (await messagesOf(ticket)).every((m) => m.state === 'delivered' || m.state === 'failed');

    it('each message leaves through the SMSC of the first route that matches its prefix, country or sender, and records both', async () => {
      await startWorker();
      const fr = ['33612345678', '33698765432'];
      const be = ['32470123456'];
      const plain = await send([...fr, ...be], 'Pigeon');
      const promotion = await send(['33611111111'], 'promo');
      await waitFor(allFinal(plain.ticket), 'plain campaign delivered');
      await waitFor(allFinal(promotion.ticket), 'promotion delivered');

      expect(france.submits.map((s) => s.destination).sort()).toEqual(fr);
      expect(belgium.submits.map((s) => s.destination)).toEqual(be);
      // The sender rule comes first: a French number with sender "promo" takes the promotions route.
      expect(promo.submits.map((s) => s.destination)).toEqual(['33611111111']);
      expect(
        (await messagesOf(plain.ticket)).map((m) => [m.recipient, m.route, m.connector, m.state]),
      ).toEqual([
        ['33612345678', 'france', 'orange', 'delivered'],
        ['33698765432', 'france', 'orange', 'delivered'],
        ['32470123456', 'belgium', 'proximus', 'delivered'],
      ]);

      const history = await call(h.app, 'GET', '/messages', {
        token: account.token,
        query: { date_start: '2026-01-05 00:00:00', date_end: '2026-01-06 00:00:00', sort: 'id' },
      });
      expect(history.body.status, history.body.details).toBe(1);
      const byDestination = new Map(
        (history.body.messages as { destination: string; route: string; connector: string }[]).map((m) => [
          m.destination,
          m,
        ]),
      );
      expect(byDestination.get('32470123456')).toMatchObject({ route: 'belgium', connector: 'proximus' });
      expect(byDestination.get('33611111111')).toMatchObject({
        route: 'promotions',
        connector: 'promo-smsc',
      });

      const cli = await pigeonOn(h.databaseUrl, 'messages', plain.ticket);
      expect(cli.code, cli.stderr).toBe(0);
      expect(JSON.parse(cli.stdout.trim().split('\n')[2])).toMatchObject({
        recipient: '32470123456',
        state: 'delivered',
        route: 'belgium',
        connector: 'proximus',
      });
    });

    it('a reply reaches the account that last wrote to the number through the SMSC the reply came in on', async () => {
      await startWorker();
      const other = await h.account({ credits: 1_000 });
      const number = '33677777777';
      // This account writes first, through the promotions SMSC; the other writes last, through orange.
      const first = await send([number], 'Promo');
      await waitFor(allFinal(first.ticket), 'promotion delivered');
      const r = await call(h.app, 'POST', '/send', {
        token: other.token,
        json: {
          sms: { message: { text: 'Later', sender: 'Pigeon' }, recipients: { gsm: [{ value: number }] } },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      await waitFor(allFinal(String(r.body.ticket)), 'later message delivered');
      const repliesOf = (accountId: number) =>
        h.deps.store.db
          .selectFrom('replies')
          .select(['text'])
          .where('account_id', '=', accountId)
          .where('number', '=', number)
          .execute();

      promo.sendMo(number, '36180', 'Reply through promo');
      await waitFor(
        async () => (await repliesOf(account.id)).length === 1,
        'reply for the promotions account',
      );
      france.sendMo(number, '36180', 'Reply through orange');
      await waitFor(
        async () => (await repliesOf(other.id)).length === 1,
        'reply for the last writer via orange',
      );
      expect(await repliesOf(account.id)).toEqual([{ text: 'Reply through promo' }]);
      expect(await repliesOf(other.id)).toEqual([{ text: 'Reply through orange' }]);
    });

    it('a recipient no route takes is counted in not_allowed at send time and not charged', async () => {
      const before = (await call(h.app, 'GET', '/credits', { token: account.token })).body.credits;
      // 49: Germany, which no route of the file takes (there is no catch-all route).
      const result = await send(['33612340000', '4915112345678', '4915112345679'], 'Pigeon');
      expect(result).toMatchObject({ sent: 1, not_allowed: 2, cost: 1 });
      expect(Number(result.credits)).toBe(Number(before) - 1);
      expect((await messagesOf(result.ticket)).map((m) => m.recipient)).toEqual(['33612340000']);
    });

    it('a queued message that finds no route when it is sent (the file changed since) fails with DLR 7 and its DLR event', async () => {
      const queued = await send(['32470999999'], 'Pigeon');
      // The worker reads a newer file in which Belgium has no route any more.
      const newer = readRoutingTable(
        {
          connectors: [{ name: 'orange', url: france.url }],
          routes: [{ name: 'france', match: { prefix: ['33'] }, connectors: ['orange'] }],
        },
        h.config,
        join(dir, 'newer.yaml'),
      );
      await startWorker(newer);
      await waitFor(allFinal(queued.ticket), 'message failed');
      expect(await messagesOf(queued.ticket)).toEqual([
        expect.objectContaining({ state: 'failed', dlr_status: 7, connector: null, route: null }),
      ]);
      const events = await h.deps.store.db
        .selectFrom('events')
        .select('payload')
        .where('type', '=', 'DLR')
        .where('campaign_id', '=', Number(queued.ticket))
        .execute();
      expect(events.map((e) => JSON.parse(e.payload).status)).toEqual([7]);
    });

    it('a weighted route shares its messages by weight (3:1 within 10%), each part of a long message through one SMSC', async () => {
      await startWorker();
      const beforeA = shareA.submits.length;
      const beforeB = shareB.submits.length;
      const numbers = Array.from({ length: 200 }, (_, i) => `316${String(12000000 + i)}`);
      const sent = await send(numbers, 'Pigeon');
      await waitFor(allFinal(sent.ticket), 'weighted campaign delivered', 20_000);
      const a = shareA.submits.length - beforeA;
      const b = shareB.submits.length - beforeB;
      expect(a + b).toBe(200);
      expect(a).toBeGreaterThanOrEqual(135);
      expect(a).toBeLessThanOrEqual(165);
      const rows = await messagesOf(sent.ticket);
      expect(rows.filter((m) => m.connector === 'share-a')).toHaveLength(a);
      expect(new Set(rows.map((m) => m.route))).toEqual(new Set(['netherlands']));

      // A three-part message: its parts never split between the two SMSCs.
      const long = await send(
        Array.from({ length: 20 }, (_, i) => `316${String(13000000 + i)}`),
        'Pigeon',
        'x'.repeat(400),
      );
      await waitFor(allFinal(long.ticket), 'long messages delivered', 20_000);
      for (const row of await messagesOf(long.ticket)) {
        const atA = shareA.submits.filter((s) => s.destination === row.recipient).length;
        const atB = shareB.submits.filter((s) => s.destination === row.recipient).length;
        expect([atA, atB].sort()).toEqual([0, 3]);
        expect(row.connector).toBe(atA === 3 ? 'share-a' : 'share-b');
      }
    });

    it('a sender limited to 10 parts per second gets no more than that (25 parts take at least 1.5 s)', async () => {
      await startWorker();
      const before = shareA.submits.length;
      // German numbers: only the sender rule routes them.
      const numbers = Array.from({ length: 25 }, (_, i) => `49151${String(12345600 + i)}`);
      const startedAt = Date.now();
      const sent = await send(numbers, 'Slow');
      const seen: number[] = [];
      // Counted on the SMSC side: when each submit arrived there.
      await waitFor(() => {
        while (shareA.submits.length - before > seen.length) seen.push(Date.now());
        return seen.length === 25;
      }, 'every throttled part at the SMSC');
      await waitFor(allFinal(sent.ticket), 'throttled campaign delivered');
      const elapsed = seen[24] - startedAt;
      // One second's budget at once, then 10 a second: 15 more parts need 1.5 s.
      expect(elapsed).toBeGreaterThanOrEqual(1400);
      expect(elapsed).toBeLessThan(4000);
      // Any second holds at most a second's budget plus what a second refills: 20 parts, of 25 sent at once.
      for (const t of seen) {
        expect(seen.filter((u) => u > t - 1000 && u <= t).length).toBeLessThanOrEqual(20);
      }
    });

    it('a bad connectors file stops `pigeon serve`, naming each error with its path', async () => {
      const bad = join(dir, 'bad.yaml');
      writeFileSync(
        bad,
        `connectors:
  - { name: a, url: "smpp://u:p@127.0.0.1:1", window: 0 }
  - { name: a, url: "ftp://x" }
routes:
  - { name: all, connectors: [a, missing], strategy: weighted, weights: [1, 0] }
`,
      );
      const child = await promisify(execFile)(process.execPath, [pigeonBin, 'serve'], {
        env: {
          ...process.env,
          DATABASE_URL: join(dir, 'never.db'),
          CONNECTORS_FILE: bad,
          PORT: '0',
          LINK_PORT: '0',
        },
        timeout: 20_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      expect(child.code).toBe(1);
      expect(child.stderr).toContain(`invalid CONNECTORS_FILE ${bad} (5 errors)`);
      expect(child.stderr).toContain('connectors[0].window: must be >= 1');
      expect(child.stderr).toContain('connectors[1].name: duplicate name "a" (already connectors[0])');
      expect(child.stderr).toContain(
        'connectors[1].url: scheme must be smpp, ssmpp or the word simulator, got "ftp"',
      );
      expect(child.stderr).toContain('routes[0].connectors[1]: unknown connector "missing"');
      expect(child.stderr).toContain('routes[0].weights[1]: must be > 0');
    });
  });
}
