// A message no route takes when it is sent (the operator changed CONNECTORS_FILE and restarted the worker
// after the send was accepted) is not charged: it fails with DLR 7, its parts go back to the account with a
// ledger line, and its campaign counts it in not_allowed instead of sent. Other failures stay charged.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRoutingTable } from '../../src/delivery/routing/connectors-file.ts';
import { createTransport } from '../../src/delivery/transports.ts';
import { availableDialects, call, createHarness, type Harness } from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { waitFor } from '../helpers/wait.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };

for (const dialect of availableDialects()) {
  describe(`a message without a route when it is sent [${dialect}]`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-no-route-'));
    let h: Harness;
    let france: TestSmsc;
    /** Answers every submit "invalid destination" (0x0b): a final refusal, not a missing route. */
    let refusing: TestSmsc;

    beforeAll(async () => {
      france = await new TestSmsc().listen();
      refusing = await new TestSmsc({ refuse: { status: 0x0b, count: 1_000 } }).listen();
      const connectors = `connectors:
  - { name: orange, url: "${france.url}" }
  - { name: strict, url: "${refusing.url}" }
`;
      // What the API read at start: Belgium has a route.
      writeFileSync(
        join(dir, 'connectors.yaml'),
        `${connectors}routes:
  - { name: strict, match: { prefix: ["3362"] }, connectors: [strict] }
  - { name: france, match: { prefix: ["33"] }, connectors: [orange] }
  - { name: belgium, match: { country: [BE] }, connectors: [orange] }
`,
      );
      // What the worker reads when it is restarted after the send: Belgium's route is gone.
      writeFileSync(
        join(dir, 'without-belgium.yaml'),
        `${connectors}routes:
  - { name: strict, match: { prefix: ["3362"] }, connectors: [strict] }
  - { name: france, match: { prefix: ["33"] }, connectors: [orange] }
`,
      );
      h = await createHarness(dialect, { CONNECTORS_FILE: join(dir, 'connectors.yaml') });
    });

    afterAll(async () => {
      await h?.close();
      await Promise.all([france?.close(), refusing?.close()]);
      rmSync(dir, { recursive: true, force: true });
    });

    const credits = async (token: string) =>
      Number((await call(h.app, 'GET', '/credits', { token })).body.credits);

    it('fails with DLR 7, its parts are refunded with a ledger line, and its campaign counts it in not_allowed', async () => {
      const account = await h.account({ credits: 100 });
      // Two parts a message: a refund gives back what the message cost, not one credit.
      const text = `Two parts: ${'x'.repeat(170)}`;
      const numbers = ['33612345678', '32470123456', '33620000000'];
      const r = await call(h.app, 'POST', '/send', {
        token: account.token,
        json: {
          sms: {
            message: { text, pushtype: 'alert', sender: 'Pigeon' },
            recipients: { gsm: numbers.map((value) => ({ value })) },
          },
        },
      });
      // Every number had a route when the send was accepted: all three charged.
      expect(r.body, r.body.details).toMatchObject({
        status: 1,
        sent: 3,
        not_allowed: 0,
        cost: 6,
        credits: 94,
      });
      const ticket = Number(r.body.ticket);

      const table = loadRoutingTable({ ...h.config, CONNECTORS_FILE: join(dir, 'without-belgium.yaml') });
      const transport = createTransport(h.config, quiet, undefined, table);
      const worker = testDeliveryWorker(h, transport);
      await worker.start();
      try {
        const messages = () =>
          h.deps.store.db
            .selectFrom('messages')
            .select(['recipient', 'state', 'dlr_status', 'error'])
            .where('campaign_id', '=', ticket)
            .orderBy('seq')
            .execute();
        await waitFor(
          async () => (await messages()).every((m) => m.state === 'delivered' || m.state === 'failed'),
          'every message final',
        );
        expect(await messages()).toEqual([
          { recipient: '33612345678', state: 'delivered', dlr_status: 3, error: null },
          {
            recipient: '32470123456',
            state: 'failed',
            dlr_status: 7,
            error: 'no route of CONNECTORS_FILE accepts this message',
          },
          // Refused for good by its SMSC: sent, so charged as before.
          { recipient: '33620000000', state: 'failed', dlr_status: 5, error: 'command_status 0x0000000b' },
        ]);
      } finally {
        await worker.stop();
      }

      // The unrouted message's two parts are back; the other two messages stay charged.
      expect(await credits(account.token)).toBe(96);
      const ledger = await h.deps.store.db
        .selectFrom('credit_ledger')
        .select(['delta', 'balance_after', 'reason', 'campaign_id'])
        .where('account_id', '=', account.id)
        .where('campaign_id', '=', ticket)
        .orderBy('id')
        .execute();
      expect(ledger.map((l) => [Number(l.delta), Number(l.balance_after), l.reason])).toEqual([
        [-6, 94, 'campaign'],
        [2, 96, 'refund'],
      ]);
      // The campaign counts it as a recipient no route took, and costs what was kept.
      const campaign = await h.deps.store.db
        .selectFrom('campaigns')
        .select(['total', 'sent', 'not_allowed', 'cost'])
        .where('id', '=', ticket)
        .executeTakeFirstOrThrow();
      expect(campaign).toEqual({ total: 3, sent: 2, not_allowed: 1, cost: 4 });
      const read = await call(h.app, 'GET', `/campaign/${ticket}`, { token: account.token });
      expect(read.body.campaign[0]).toMatchObject({ cost: 4, total: 3, delivered: 1 });
      // Its DLR event says 7 (route not available).
      const events = await h.deps.store.db
        .selectFrom('events')
        .select('payload')
        .where('type', '=', 'DLR')
        .where('campaign_id', '=', ticket)
        .execute();
      expect(
        events.map((e) => JSON.parse(e.payload)).find((p) => p.destination === '32470123456'),
      ).toMatchObject({ status: 7 });
    });
  });
}
