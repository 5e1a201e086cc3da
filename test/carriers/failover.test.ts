// Failover between two SMSCs of one route: the first closed mid-campaign loses nothing (every message is
// delivered, at most its window twice), a throttling refusal goes to the second at once, the first takes
// traffic again once it is back, and a routing refusal (ESME_RSUBMITFAIL) goes to the second at once too.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import type { RouterTransport } from '../../src/delivery/routing/router-transport.ts';
import {
  availableDialects,
  call,
  createHarness,
  type Harness,
  type TestAccount,
} from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { startRoutedWorker } from '../helpers/worker.ts';

/** What the router warned of: a part moved off a connector that went down before writing it. */
const warnings: string[] = [];
const log = { info() {}, warn: (_obj: object, msg: string) => void warnings.push(msg), error() {} };
const window = 5;

for (const dialect of availableDialects()) {
  describe(`failover between SMSCs [${dialect}]`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-failover-'));
    let h: Harness;
    let primary: TestSmsc;
    let backup: TestSmsc;
    let account: TestAccount;
    let transport: RouterTransport;
    let worker: DeliveryWorker;

    beforeAll(async () => {
      primary = await new TestSmsc().listen();
      backup = await new TestSmsc().listen();
      const file = join(dir, 'connectors.json');
      writeFileSync(
        file,
        JSON.stringify({
          connectors: [
            { name: 'primary', url: primary.url, binds: 1, window },
            { name: 'backup', url: backup.url, binds: 1, window },
          ],
          routes: [{ name: 'everything', connectors: ['primary', 'backup'], strategy: 'failover' }],
        }),
      );
      h = await createHarness(dialect, { CONNECTORS_FILE: file });
      account = await h.account({ credits: 100_000 });
      ({ transport, worker } = await startRoutedWorker(h, log, { batchSize: 100 }));
    });

    afterAll(async () => {
      await worker?.stop();
      await h?.close();
      await Promise.all([primary?.close(), backup?.close()]);
      rmSync(dir, { recursive: true, force: true });
    });

    async function send(numbers: string[]) {
      const r = await call(h.app, 'POST', '/send', {
        token: account.token,
        json: {
          sms: {
            message: { text: 'Failover', pushtype: 'alert', sender: 'Pigeon' },
            recipients: { gsm: numbers.map((value) => ({ value })) },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return String(r.body.ticket);
    }

    const messagesOf = (ticket: string) =>
      h.deps.store.db
        .selectFrom('messages')
        .select(['recipient', 'state', 'connector'])
        .where('campaign_id', '=', Number(ticket))
        .execute();

    const delivered = (ticket: string) => async () =>
      (await messagesOf(ticket)).every((m) => m.state === 'delivered');

    const destinations = (smsc: TestSmsc, from = 0) => smsc.submits.slice(from).map((s) => s.destination);

    it('the first SMSC closed mid-campaign: the rest goes through the second, every message delivered once but at most the window, and counted', async () => {
      const numbers = Array.from({ length: 300 }, (_, i) => `336${String(20000000 + i)}`);
      const ticket = await send(numbers);
      await waitFor(() => primary.submits.length >= 60, 'a part of the campaign through the primary');
      // The primary stops answering, fills its window, then dies with those submits unanswered.
      primary.holdResponses = true;
      const atHold = primary.submits.length;
      await waitFor(() => primary.submits.length - atHold >= window, 'the primary window full');
      // And parts queued behind it, waiting for a slot (each part handed to the router is watched until it
      // is answered): those are the ones withdrawn when the primary goes down.
      const watched = () => (transport as unknown as { watches: Set<unknown> }).watches.size;
      await waitFor(() => watched() > window, 'parts queued behind the full window');
      const closedAt = Date.now();
      await primary.close();
      const atClose = primary.submits.length;
      await waitFor(delivered(ticket), 'every message delivered', 30_000);
      // Within seconds: the connector stops taking work as its binds drop, and what it held moves on at once.
      expect(Date.now() - closedAt).toBeLessThan(10_000);

      expect(primary.submits.length).toBe(atClose);
      // The parts queued behind the full window were withdrawn from the primary and went through the backup.
      expect(warnings).toContain(
        'connector down before the part was written; sending it through the next one',
      );
      const viaPrimary = destinations(primary);
      const viaBackup = destinations(backup);
      expect(new Set([...viaPrimary, ...viaBackup])).toEqual(new Set(numbers));
      // Each message once at the backup; the only ones sent twice are those the primary never answered.
      expect(new Set(viaBackup).size).toBe(viaBackup.length);
      const twice = viaBackup.filter((d) => viaPrimary.includes(d));
      expect(twice.length).toBeGreaterThan(0);
      expect(twice.length).toBeLessThanOrEqual(window);
      expect(twice.every((d) => primary.submits.slice(atHold).some((s) => s.destination === d))).toBe(true);

      const rows = await messagesOf(ticket);
      expect(rows.filter((m) => m.connector === 'backup')).toHaveLength(viaBackup.length);
      expect(rows.filter((m) => m.connector === 'primary')).toHaveLength(300 - viaBackup.length);
      const campaign = await call(h.app, 'GET', `/campaign/${ticket}`, { token: account.token });
      expect(campaign.body.campaign[0]).toMatchObject({ total: 300, delivered: 300, error: 0 });
    });

    it('the first SMSC back (throttling its first submits): it takes traffic again, and each throttled part goes through the second at once', async () => {
      const port = primary.port;
      primary = await new TestSmsc({ refuse: { status: 0x58, count: 3 } }).listen(port);
      await waitFor(() => transport.connectors[0].transport.ready(), 'the primary bound again', 20_000);
      const before = backup.submits.length;
      const numbers = Array.from({ length: 30 }, (_, i) => `336${String(30000000 + i)}`);
      const ticket = await send(numbers);
      await waitFor(delivered(ticket), 'every message delivered', 20_000);
      // Three refused as throttled, each sent through the backup at once; the other 27 through the primary.
      expect(destinations(backup, before)).toHaveLength(3);
      expect(destinations(primary)).toHaveLength(27);
      expect(new Set([...destinations(primary), ...destinations(backup, before)])).toEqual(new Set(numbers));
      const rows = await messagesOf(ticket);
      expect(rows.filter((m) => m.connector === 'primary')).toHaveLength(27);
    });

    it('the first SMSC answering ESME_RSUBMITFAIL (0x45, no route for the destination): each such part goes through the second at once and is delivered', async () => {
      const port = primary.port;
      await primary.close();
      await waitFor(() => !transport.connectors[0].transport.ready(), 'the primary connector down');
      primary = await new TestSmsc({ refuse: { status: 0x45, count: 4 } }).listen(port);
      await waitFor(() => transport.connectors[0].transport.ready(), 'the primary bound again', 20_000);
      const before = backup.submits.length;
      const numbers = Array.from({ length: 20 }, (_, i) => `336${String(40000000 + i)}`);
      const ticket = await send(numbers);
      await waitFor(delivered(ticket), 'every message delivered', 20_000);
      // Four refused by the primary for want of a route, each taken by the backup; none failed.
      expect(destinations(backup, before)).toHaveLength(4);
      expect(destinations(primary)).toHaveLength(16);
      expect(new Set([...destinations(primary), ...destinations(backup, before)])).toEqual(new Set(numbers));
      const rows = await messagesOf(ticket);
      expect(rows.filter((m) => m.connector === 'backup')).toHaveLength(4);
      const campaign = await call(h.app, 'GET', `/campaign/${ticket}`, { token: account.token });
      expect(campaign.body.campaign[0]).toMatchObject({ total: 20, delivered: 20, error: 0 });
    });
  });
}
