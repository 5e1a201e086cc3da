// SMPP over TLS among several SMSCs, as an operator configures it: a YAML CONNECTORS_FILE naming a plain
// smpp:// connector and an ssmpp:// one whose self-signed certificate tls.caFile (relative to the file)
// vouches for, a route by prefix to each; a campaign reaches both SMSCs and every message gets its receipt.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { availableDialects, call, createHarness, type Harness } from '../helpers/harness.ts';
import { TestSmsc } from '../helpers/smsc.ts';
import { type TestCertificates, testCertificates } from '../helpers/tls-certs.ts';
import { waitFor } from '../helpers/wait.ts';
import { startRoutedWorker } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };

for (const dialect of availableDialects()) {
  describe(`plain and TLS SMSCs routed from one connectors file [${dialect}]`, () => {
    let certs: TestCertificates;
    let h: Harness;
    let plain: TestSmsc;
    let secure: TestSmsc;
    let worker: DeliveryWorker;

    beforeAll(async () => {
      certs = testCertificates();
      const local = certs.make('smsc-local', ['DNS:localhost', 'IP:127.0.0.1']);
      plain = await new TestSmsc().listen();
      secure = await new TestSmsc({ tls: { key: local.key, cert: local.cert } }).listen();
      expect(secure.url.startsWith('ssmpp://')).toBe(true);
      const file = join(certs.dir, 'connectors.yaml');
      writeFileSync(
        file,
        `# One carrier in clear, one over TLS with its own CA (the certificate is self-signed: its own CA).
connectors:
  - name: plain-fr
    url: "${plain.url}"
  - name: tls-be
    url: "${secure.url}"
    tls:
      caFile: smsc-local.cert.pem
      checkServerName: true
routes:
  - name: france
    match: { prefix: ["33"] }
    connectors: [plain-fr]
  - name: belgium
    match: { prefix: ["32"] }
    connectors: [tls-be]
`,
      );
      h = await createHarness(dialect, { CONNECTORS_FILE: file });
      ({ worker } = await startRoutedWorker(h, quiet));
    });

    afterAll(async () => {
      await worker?.stop();
      await h?.close();
      await Promise.all([plain?.close(), secure?.close()]);
      certs?.remove();
    });

    it('each message reaches the SMSC of its prefix, the Belgian ones over TLS, and every one gets its receipt', async () => {
      const account = await h.account({ credits: 100 });
      const french = ['33612345601', '33612345602', '33612345603'];
      const belgian = ['32470123401', '32470123402', '32470123403'];
      const r = await call(h.app, 'POST', '/send', {
        token: account.token,
        json: {
          sms: {
            message: { text: 'Plain and TLS', pushtype: 'alert', sender: 'Pigeon' },
            recipients: { gsm: [...french, ...belgian].map((value) => ({ value })) },
          },
        },
      });
      expect(r.body.status, r.body.details).toBe(1);
      const messages = () =>
        h.deps.store.db
          .selectFrom('messages')
          .select(['recipient', 'state', 'connector', 'route'])
          .where('campaign_id', '=', Number(r.body.ticket))
          .orderBy('seq')
          .execute();
      // Delivered: the receipt of each came back, over the connection its message went out on.
      await waitFor(async () => (await messages()).every((m) => m.state === 'delivered'), 'every receipt');

      expect(plain.submits.map((s) => s.destination).sort()).toEqual(french);
      expect(secure.submits.map((s) => s.destination).sort()).toEqual(belgian);
      expect((await messages()).map((m) => [m.recipient, m.route, m.connector])).toEqual([
        ...french.map((n) => [n, 'france', 'plain-fr']),
        ...belgian.map((n) => [n, 'belgium', 'tls-be']),
      ]);
      // The TLS SMSC's connection is encrypted; the plain one's is not.
      const encrypted = (smsc: TestSmsc) =>
        [...smsc.sessions].map((s) => (s.socket as TLSSocket).encrypted === true);
      expect(encrypted(secure)).toEqual([true]);
      expect(encrypted(plain)).toEqual([false]);
      const campaign = await call(h.app, 'GET', `/campaign/${r.body.ticket}`, { token: account.token });
      expect(campaign.body.campaign[0]).toMatchObject({ total: 6, delivered: 6, error: 0 });
    });
  });
}
