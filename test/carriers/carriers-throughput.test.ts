// Parts per second on real SMSCs: a connector's `tps` holds over all its binds, and with a sender limit as well
// the lower of the two wins. Measured on the SMSC side, when each submit_sm arrived: after the first second's
// budget the parts come at the limit's pace, and no rolling second holds more than a second's budget plus what
// a second refills.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { createTransport } from '../../src/delivery/transports.ts';
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

/** The most arrival times any rolling second (t − 1000 ms, t] holds. */
const busiestSecond = (times: number[]) =>
  Math.max(...times.map((t) => times.filter((u) => u > t - 1000 && u <= t).length));

for (const dialect of availableDialects()) {
  describe(`parts per second of a connector [${dialect}]`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-tps-'));
    let h: Harness;
    let account: TestAccount;
    let limited: TestSmsc;
    let slow: TestSmsc;
    let fast: TestSmsc;
    const running: DeliveryWorker[] = [];

    beforeAll(async () => {
      [limited, slow, fast] = await Promise.all([0, 1, 2].map(() => new TestSmsc().listen()));
      const file = join(dir, 'connectors.yaml');
      writeFileSync(
        file,
        `connectors:
  - { name: limited, url: "${limited.url}", binds: 2, tps: 10 }
  - { name: slow, url: "${slow.url}", tps: 5 }
  - { name: fast, url: "${fast.url}", tps: 20 }
routes:
  # A sender allowed 20 a second through a connector allowed 5: the connector's limit is the lower.
  - { name: quick-sender, match: { sender: [Quick] }, connectors: [slow] }
  # A sender allowed 5 a second through a connector allowed 20: the sender's limit is the lower.
  - { name: slow-sender, match: { sender: [Careful] }, connectors: [fast] }
  - { name: everything, connectors: [limited] }
senders:
  Quick: 20
  Careful: 5
`,
      );
      h = await createHarness(dialect, { CONNECTORS_FILE: file });
      account = await h.account({ credits: 10_000 });
    });

    afterEach(async () => {
      for (const worker of running.splice(0)) await worker.stop();
    });

    afterAll(async () => {
      await h?.close();
      await Promise.all([limited, slow, fast].map((s) => s?.close()));
      rmSync(dir, { recursive: true, force: true });
    });

    async function startWorker() {
      const transport = createTransport(h.config, quiet, undefined, h.deps.routing);
      const worker = testDeliveryWorker(h, transport, { batchSize: 100 });
      await worker.start();
      running.push(worker);
      await waitFor(() => transport.connectors.every((c) => c.transport.ready()), 'every connector bound');
    }

    /**
     * Sends `count` one-part messages from `sender` and answers when each reached `smsc` (ms, Date.now),
     * once the campaign is delivered.
     */
    async function arrivals(smsc: TestSmsc, sender: string, count: number, prefix: string) {
      const before = smsc.submits.length;
      const numbers = Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
      const r = await call(h.app, 'POST', '/send', {
        token: account.token,
        json: {
          sms: {
            message: { text: 'Paced', pushtype: 'alert', sender },
            recipients: { gsm: numbers.map((value) => ({ value })) },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      const seen: number[] = [];
      await waitFor(
        () => {
          while (smsc.submits.length - before > seen.length) seen.push(Date.now());
          return seen.length === count;
        },
        `${count} parts at the SMSC`,
        20_000,
      );
      await waitFor(
        async () =>
          (
            await h.deps.store.db
              .selectFrom('messages')
              .select('state')
              .where('campaign_id', '=', Number(r.body.ticket))
              .execute()
          ).every((m) => m.state === 'delivered'),
        'campaign delivered',
      );
      expect(
        smsc.submits
          .slice(before)
          .map((s) => s.destination)
          .sort(),
      ).toEqual(numbers);
      return seen;
    }

    it('a connector limited to 10 parts per second over its two binds gets no more (25 parts take 1.5 s)', async () => {
      await startWorker();
      const seen = await arrivals(limited, 'Pigeon', 25, '3361234');
      // Both binds carried parts, under one budget.
      expect(new Set(limited.submits.map((s) => s.clientPort)).size).toBe(2);
      // A second's budget (10) at once, then 10 a second: the 15 others need 1.5 s.
      const span = seen[24] - seen[0];
      expect(span).toBeGreaterThanOrEqual(1400);
      expect(span).toBeLessThan(4000);
      expect(busiestSecond(seen)).toBeLessThanOrEqual(20);
    });

    it('a sender limit and a connector limit together: the lower one wins, whichever it is', async () => {
      await startWorker();
      // Sender 20/s through a connector of 5/s: paced at 5 (at 20, all 15 would go at once).
      const throughSlow = await arrivals(slow, 'Quick', 15, '3361235');
      // Sender 5/s through a connector of 20/s: paced at 5 as well.
      const fromCareful = await arrivals(fast, 'Careful', 15, '3361236');
      for (const seen of [throughSlow, fromCareful]) {
        // Five at once, then five a second: the ten others need 2 s.
        const span = seen[14] - seen[0];
        expect(span).toBeGreaterThanOrEqual(1900);
        expect(span).toBeLessThan(4500);
        expect(busiestSecond(seen)).toBeLessThanOrEqual(10);
      }
    });
  });
}
