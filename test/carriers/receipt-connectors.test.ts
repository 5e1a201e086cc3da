// Receipts from several SMSCs (CONNECTORS_FILE): two SMSCs that hand out the same message ids each close the
// message that went out through them, whichever order their receipts come in; and after a failover a receipt
// that comes in on another connector (another bind) still closes its message.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import type { RouterTransport } from '../../src/delivery/routing/router-transport.ts';
import { deliverySessions, sendReceipt } from '../helpers/carriers-smsc.ts';
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

const quiet = { info() {}, warn() {}, error() {} };

for (const dialect of availableDialects()) {
  describe(`receipts from several SMSCs [${dialect}]`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-receipts-'));
    let h: Harness;
    let account: TestAccount;
    let transport: RouterTransport;
    let worker: DeliveryWorker;
    // Receipts only when the test sends them, so both messages wait for theirs at once.
    let alpha: TestSmsc;
    let beta: TestSmsc;
    let primary: TestSmsc;
    let backup: TestSmsc;

    beforeAll(async () => {
      // Two carriers that number their messages from the same id, as independent SMSCs may.
      alpha = await new TestSmsc({ receipts: 'none', firstId: 5000 }).listen();
      beta = await new TestSmsc({ receipts: 'none', firstId: 5000 }).listen();
      primary = await new TestSmsc({ receipts: 'none' }).listen();
      backup = await new TestSmsc({ receipts: 'none' }).listen();
      const file = join(dir, 'connectors.yaml');
      writeFileSync(
        file,
        `connectors:
  - { name: alpha, url: "${alpha.url}" }
  - { name: beta, url: "${beta.url}" }
  - { name: primary, url: "${primary.url}" }
  - { name: backup, url: "${backup.url}", binds: 2 }
routes:
  - { name: to-alpha, match: { prefix: ["3361"] }, connectors: [alpha] }
  - { name: to-beta, match: { prefix: ["3362"] }, connectors: [beta] }
  - { name: failover, match: { prefix: ["3363"] }, connectors: [primary, backup], strategy: failover }
`,
      );
      h = await createHarness(dialect, { CONNECTORS_FILE: file });
      account = await h.account({ credits: 1_000 });
      ({ transport, worker } = await startRoutedWorker(h, quiet));
    });

    afterAll(async () => {
      await worker?.stop();
      await h?.close();
      await Promise.all([alpha, beta, primary, backup].map((s) => s?.close()));
      rmSync(dir, { recursive: true, force: true });
    });

    async function send(number: string) {
      const r = await call(h.app, 'POST', '/send', {
        token: account.token,
        json: {
          sms: {
            message: { text: 'Receipts', pushtype: 'alert', sender: 'Pigeon' },
            recipients: { gsm: [{ value: number }] },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      return Number(r.body.ticket);
    }

    const messageOf = (campaignId: number) =>
      h.deps.store.db
        .selectFrom('messages')
        .select(['state', 'dlr_status', 'smsc_id', 'connector'])
        .where('campaign_id', '=', campaignId)
        .executeTakeFirstOrThrow();

    /** Sends to `number` and waits until the SMSC's answer is recorded (its part awaits a receipt). */
    async function submitted(number: string) {
      const campaignId = await send(number);
      await waitFor(async () => (await messageOf(campaignId)).state === 'submitted', `${number} submitted`);
      return campaignId;
    }

    const final = (campaignId: number) => async () =>
      ['delivered', 'failed'].includes((await messageOf(campaignId)).state);

    it('two SMSCs giving the same message id: each receipt closes the message that went out through its own SMSC', async () => {
      // The older message through alpha, the newer through beta: matched by id alone, alpha's receipt would
      // close the newer one (beta's).
      const viaAlpha = await submitted('33610000001');
      const viaBeta = await submitted('33620000001');
      expect(await messageOf(viaAlpha)).toMatchObject({ connector: 'alpha', smsc_id: '1388' });
      expect(await messageOf(viaBeta)).toMatchObject({ connector: 'beta', smsc_id: '1388' });

      sendReceipt(alpha, { messageId: '1388', destination: '33610000001', stat: 'UNDELIV' });
      await waitFor(async () => (await final(viaAlpha)()) || (await final(viaBeta)()), "alpha's receipt");
      expect((await messageOf(viaAlpha)).state).toBe('failed');
      expect((await messageOf(viaBeta)).state).toBe('submitted');
      sendReceipt(beta, { messageId: '1388', destination: '33620000001', stat: 'DELIVRD' });
      await waitFor(final(viaBeta), "beta's message closed by beta's receipt");
      expect(await messageOf(viaAlpha)).toMatchObject({ state: 'failed', dlr_status: 2 });
      expect(await messageOf(viaBeta)).toMatchObject({ state: 'delivered', dlr_status: 3 });

      // Again with the next id, both receipts sent at once (recorded in one batch, found by one query).
      const second = await submitted('33610000002');
      const secondBeta = await submitted('33620000002');
      expect((await messageOf(second)).smsc_id).toBe((await messageOf(secondBeta)).smsc_id);
      sendReceipt(alpha, { messageId: '1389', destination: '33610000002', stat: 'DELIVRD' });
      sendReceipt(beta, { messageId: '1389', destination: '33620000002', stat: 'UNDELIV' });
      await waitFor(async () => (await final(second)()) && (await final(secondBeta)()), 'both closed');
      expect(await messageOf(second)).toMatchObject({ state: 'delivered', dlr_status: 3 });
      expect(await messageOf(secondBeta)).toMatchObject({ state: 'failed', dlr_status: 2 });
      // One DLR event each, with its own status.
      const events = await h.deps.store.db
        .selectFrom('events')
        .select(['campaign_id', 'payload'])
        .where('type', '=', 'DLR')
        .where('campaign_id', 'in', [viaAlpha, viaBeta, second, secondBeta])
        .execute();
      expect(
        Object.fromEntries(events.map((e) => [Number(e.campaign_id), JSON.parse(e.payload).status])),
      ).toEqual({ [viaAlpha]: 2, [viaBeta]: 3, [second]: 3, [secondBeta]: 2 });
    });

    it('after a failover, a receipt that comes in on the other connector (any of its binds) still closes its message', async () => {
      const early = await submitted('33630000001');
      expect((await messageOf(early)).connector).toBe('primary');
      const earlyId = primary.submits.at(-1)!.messageId;
      // The primary SMSC goes away before its receipt came: the route fails over to the backup.
      await primary.close();
      await waitFor(() => !transport.connectors[2].transport.ready(), 'the primary connector down');
      const late = await submitted('33630000002');
      expect((await messageOf(late)).connector).toBe('backup');
      const lateId = backup.submits.at(-1)!.messageId;
      await waitFor(() => deliverySessions(backup).length === 2, 'both backup binds');

      // The backup's platform reports the earlier message, on its second bind; then the later one, on its first.
      sendReceipt(backup, { messageId: earlyId, destination: '33630000001', stat: 'DELIVRD' }, 1);
      sendReceipt(backup, { messageId: lateId, destination: '33630000002', stat: 'DELIVRD' }, 0);
      await waitFor(async () => (await final(early)()) && (await final(late)()), 'both closed');
      expect(await messageOf(early)).toMatchObject({ state: 'delivered', connector: 'primary' });
      expect(await messageOf(late)).toMatchObject({ state: 'delivered', connector: 'backup' });
      const orphans = await h.deps.store.db.selectFrom('orphan_receipts').select('smsc_id').execute();
      expect(orphans).toEqual([]);
    });
  });
}
