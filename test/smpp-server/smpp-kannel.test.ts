// Debian's Kannel (bearerbox and smsbox) as an independent SMPP client of Pigeon's SMPP server: an
// `smsc = smpp` group bound to it with an account's SMPP user, messages sent through Kannel's sendsms
// interface with a dlr-url, each charged to the account and each receipt coming back to the dlr-url.
// Skipped where Kannel is not installed.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SmppServer } from '../../src/smpp-server/smpp-server.ts';
import { freePort } from '../helpers/free-port.ts';
import { call, describeEachDialect, type TestAccount } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveringSimulator, testDeliveryWorker } from '../helpers/worker.ts';
import { startSmppServer } from './smpp-client.ts';

const kannel = (() => {
  try {
    execFileSync('bearerbox', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function kannelConf(dir: string, ports: { admin: number; smsbox: number; sendsms: number; smpp: number }) {
  return `group = core
admin-port = ${ports.admin}
admin-interface = 127.0.0.1
admin-password = test
admin-allow-ip = "127.0.0.1"
smsbox-port = ${ports.smsbox}
smsbox-interface = 127.0.0.1
box-allow-ip = "127.0.0.1"
log-file = "${dir}/bearerbox.log"
log-level = 1
dlr-storage = internal

group = smsc
smsc = smpp
smsc-id = pigeon
host = 127.0.0.1
port = ${ports.smpp}
transceiver-mode = true
smsc-username = kannel
smsc-password = kpass
system-type = ""
enquire-link-interval = 30
reconnect-delay = 1
msg-id-type = 0x00

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = ${ports.smsbox}
sendsms-port = ${ports.sendsms}
sendsms-interface = 127.0.0.1
log-file = "${dir}/smsbox.log"
log-level = 1

group = sendsms-user
username = test
password = test
max-messages = 3
concatenation = true

group = sms-service
keyword = default
catch-all = true
get-url = "http://127.0.0.1:1/mo?from=%p&text=%a"
max-messages = 0
`;
}

(kannel ? describeEachDialect : () => it.skip('Kannel is not installed', () => {}))(
  'SMPP server with Kannel',
  (h) => {
    let server: SmppServer;
    let account: TestAccount;
    let worker: ReturnType<typeof testDeliveryWorker>;
    let receiver: WebhookReceiver;
    let dir: string;
    let sendsmsPort: number;
    const boxes: ChildProcess[] = [];

    beforeAll(async () => {
      let port: number;
      ({ server, port } = await startSmppServer(h()));
      account = await h().account({ credits: 100 });
      await h().deps.services.smppUsers.createForAccount(account.id, {
        system_id: 'kannel',
        password: 'kpass',
        tps: 0,
      });
      worker = testDeliveryWorker(h(), deliveringSimulator(0));
      await worker.start();
      receiver = await new WebhookReceiver().listen();
      dir = mkdtempSync(join(tmpdir(), 'pigeon-kannel-'));
      const ports = {
        admin: await freePort(),
        smsbox: await freePort(),
        sendsms: await freePort(),
        smpp: port,
      };
      sendsmsPort = ports.sendsms;
      const conf = join(dir, 'kannel.conf');
      writeFileSync(conf, kannelConf(dir, ports));
      boxes.push(spawn('bearerbox', ['-v', '4', conf], { stdio: 'ignore' }));
      // Kannel's binds: one transceiver of the SMPP user.
      await waitFor(
        () => server.sessions().some((s) => s.user?.systemId === 'kannel'),
        'Kannel bound',
        30_000,
      );
      boxes.push(spawn('smsbox', ['-v', '4', conf], { stdio: 'ignore' }));
      await waitFor(
        () =>
          fetch(`http://127.0.0.1:${ports.admin}/status.txt?password=test`)
            .then((r) => r.text())
            .then((t) => /smsbox:.*\(on-line/.test(t))
            .catch(() => false),
        'smsbox connected',
        30_000,
      );
    }, 90_000);

    afterAll(async () => {
      for (const box of boxes.reverse()) {
        box.kill('SIGTERM');
        if (box.exitCode === null) await new Promise((resolve) => box.once('exit', resolve));
      }
      await worker?.stop();
      await receiver?.close();
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it('sends through Kannel’s sendsms, charges the account per message and brings every receipt back to the dlr-url', async () => {
      const count = 5;
      for (let i = 0; i < count; i++) {
        const query = new URLSearchParams({
          username: 'test',
          password: 'test',
          from: 'MyShop',
          to: `3361234560${i + 2}`,
          text: `Kannel message ${i}`,
          'dlr-mask': '3',
          'dlr-url': receiver.url(`/dlr?n=${i}&type=%d&id=%F`),
        });
        const r = await fetch(`http://127.0.0.1:${sendsmsPort}/cgi-bin/sendsms?${query}`);
        expect(r.status).toBeLessThan(300);
      }
      await waitFor(
        () =>
          new Set(receiver.requests.filter((r) => r.path.includes('type=1')).map((r) => r.path.split('&')[0]))
            .size === count,
        'every delivered receipt at the dlr-url',
        30_000,
      );
      expect(receiver.requests.filter((r) => !r.path.includes('type=1'))).toEqual([]);
      const credits = (await call(h().app, 'GET', '/credits', { token: account.token })).body.credits;
      expect(credits).toBe(100 - count);
      const messages = (await call(h().app, 'GET', '/messages', { token: account.token })).body.messages;
      expect(messages).toHaveLength(count);
      expect(
        messages.every((m: { status: number; sender: string }) => m.status === 3 && m.sender === 'MyShop'),
      ).toBe(true);
    }, 60_000);
    it('sends a long message Kannel splits into parts: charged per part, its receipt back to the dlr-url', async () => {
      const before = (await call(h().app, 'GET', '/credits', { token: account.token })).body.credits;
      const text = `${'Long message through Kannel. '.repeat(8)}End.`;
      const query = new URLSearchParams({
        username: 'test',
        password: 'test',
        from: 'MyShop',
        to: '33612345699',
        text,
        'dlr-mask': '3',
        'dlr-url': receiver.url('/dlr?n=long&type=%d'),
      });
      const r = await fetch(`http://127.0.0.1:${sendsmsPort}/cgi-bin/sendsms?${query}`);
      expect(r.status).toBeLessThan(300);
      await waitFor(
        () => receiver.requests.some((q) => q.path.startsWith('/dlr?n=long') && q.path.includes('type=1')),
        'the long message’s receipt at the dlr-url',
        30_000,
      );
      expect(
        receiver.requests.filter((q) => q.path.startsWith('/dlr?n=long') && !q.path.includes('type=1')),
      ).toEqual([]);
      const messages = (await call(h().app, 'GET', '/messages', { token: account.token })).body.messages;
      expect(messages.find((m: { destination: string }) => m.destination === '33612345699')).toMatchObject({
        text,
        cost: 2,
      });
      expect((await call(h().app, 'GET', '/credits', { token: account.token })).body.credits).toBe(
        before - 2,
      );
    }, 60_000);
  },
);
