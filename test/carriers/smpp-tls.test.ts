// SMPP over TLS (ssmpp://): an SMSC built on the `smpp` package's TLS server with a self-signed certificate
// made for the test; the connector trusts the CA of tls.caFile and checks the certificate's name unless
// tls.checkServerName is false; a campaign delivered through such a connector by the delivery worker.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildParts } from '../../src/delivery/outbound-parts.ts';
import { SmppTransport, type SmppTransportOptions } from '../../src/delivery/smpp/smpp-transport.ts';
import type { Receipt } from '../../src/delivery/transport.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { TestSmsc, testSmppOptions } from '../helpers/smsc.ts';
import { type TestCertificate, type TestCertificates, testCertificates } from '../helpers/tls-certs.ts';
import { waitFor } from '../helpers/wait.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

interface Line {
  level: 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

function recordingLog() {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (obj: object, msg: string) =>
    void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('SMPP over TLS (ssmpp://)', () => {
  let certs: TestCertificates;
  /** Names 127.0.0.1 and localhost: what the connector dials. */
  let local: TestCertificate;
  /** Names another host only. */
  let elsewhere: TestCertificate;
  /** A CA that signed neither. */
  let stranger: TestCertificate;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(() => {
    certs = testCertificates();
    local = certs.make('local', ['DNS:localhost', 'IP:127.0.0.1']);
    elsewhere = certs.make('elsewhere', ['DNS:smsc.example.net']);
    stranger = certs.make('stranger', ['DNS:localhost', 'IP:127.0.0.1']);
  });
  afterAll(() => certs.remove());
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function connect(
    served: TestCertificate,
    tls: SmppTransportOptions['tls'],
    overrides: Partial<SmppTransportOptions> = {},
  ) {
    const smsc = await new TestSmsc({ tls: { key: served.key, cert: served.cert } }).listen();
    cleanups.push(() => smsc.close());
    const { lines, log } = recordingLog();
    const receipts: Receipt[] = [];
    const transport = new SmppTransport(
      testSmppOptions(smsc.url, { name: 'secure', tls, backpressureRetries: 1, ...overrides }),
      log,
    );
    cleanups.push(() => transport.stop());
    await transport.start({
      onReceipt: async (r) => void receipts.push(r),
      onInbound: async () => {},
    });
    return { smsc, transport, lines, receipts };
  }

  const part = () =>
    buildParts({ recipient: '33612345678', sender: 'Pigeon', text: 'over TLS', encoding: 'gsm7', ref: 1 })[0];

  it('a message goes through ssmpp:// to an SMSC whose certificate the CA file vouches for, and its receipt comes back', async () => {
    const { smsc, transport, receipts } = await connect(local, {
      caFile: local.certFile,
      checkServerName: true,
    });
    expect(smsc.url.startsWith('ssmpp://')).toBe(true);
    await waitFor(() => transport.ready(), 'the TLS bind');
    const outcome = await transport.submit(part());
    expect(outcome).toEqual({ ok: true, smscId: smsc.submits[0].messageId });
    await waitFor(() => receipts.length === 1, 'the receipt over TLS');
    expect(receipts[0]).toMatchObject({ smscId: smsc.submits[0].messageId, stat: 'DELIVRD' });
    expect(transport.status()).toMatchObject({ name: 'secure', state: 'bound', bindsUp: 1, lastError: null });
  });

  it('a certificate the CA file did not sign is refused before any bind, logged with host:port and the cause, and retried', async () => {
    const { smsc, transport, lines } = await connect(local, {
      caFile: stranger.certFile,
      checkServerName: true,
    });
    const refusals = () => lines.filter((l) => l.level === 'warn' && /TLS/.test(l.msg));
    await waitFor(() => refusals().length >= 3, 'three refused TLS handshakes (retried with backoff)');
    expect(smsc.bindAttempts).toBe(0);
    expect(transport.ready()).toBe(false);
    const [first] = refusals();
    expect(first.msg).toContain(`127.0.0.1:${smsc.port}`);
    expect(first.obj).toMatchObject({ connector: 'secure', host: '127.0.0.1', port: smsc.port });
    expect(String(first.obj.cause)).toMatch(/self[- ]signed|unable to verify|SELF_SIGNED/i);
    expect(transport.status()).toMatchObject({
      state: 'down',
      lastError: expect.stringMatching(/^TLS: /),
      lastErrorAt: expect.any(Number),
    });
  });

  it('a certificate naming another host is refused while checkServerName is true, the mismatch named', async () => {
    const { smsc, transport, lines } = await connect(elsewhere, {
      caFile: elsewhere.certFile,
      checkServerName: true,
    });
    const refusals = () => lines.filter((l) => l.level === 'warn' && /TLS/.test(l.msg));
    await waitFor(() => refusals().length >= 2, 'the name mismatch refused twice');
    expect(smsc.bindAttempts).toBe(0);
    expect(transport.ready()).toBe(false);
    expect(String(refusals()[0].obj.cause)).toMatch(/altnames|ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(refusals()[0].msg).toContain(`127.0.0.1:${smsc.port}`);
  });

  it('checkServerName false accepts the name mismatch when the CA vouches for the certificate', async () => {
    const { smsc, transport } = await connect(elsewhere, {
      caFile: elsewhere.certFile,
      checkServerName: false,
    });
    await waitFor(() => transport.ready(), 'the TLS bind despite the name');
    expect((await transport.submit(part())).ok).toBe(true);
    expect(smsc.submits).toHaveLength(1);
  });

  it('checkServerName false still refuses a certificate the CA file did not sign', async () => {
    const { smsc, transport, lines } = await connect(elsewhere, {
      caFile: stranger.certFile,
      checkServerName: false,
    });
    await waitFor(
      () => lines.filter((l) => l.level === 'warn' && /TLS/.test(l.msg)).length >= 2,
      'the unknown CA refused twice',
    );
    expect(smsc.bindAttempts).toBe(0);
    expect(transport.ready()).toBe(false);
  });

  it('a CA file that cannot be read stops the connector at creation, naming the file', () => {
    expect(
      () =>
        new SmppTransport(
          {
            name: 'secure',
            url: 'ssmpp://pigeon:secret@127.0.0.1:3550',
            tls: { caFile: `${certs.dir}/missing.pem`, checkServerName: true },
            binds: 1,
            window: 1,
            tps: 0,
            enquireLinkMs: 30_000,
            responseTimeoutMs: 5_000,
            reconnectMinMs: 20,
            reconnectMaxMs: 100,
            backpressureRetries: 1,
          },
          recordingLog().log,
        ),
    ).toThrow(/connector secure: tls\.caFile .*missing\.pem cannot be read/);
  });
});

describeEachDialect('a campaign over ssmpp://', (h) => {
  let certs: TestCertificates;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(() => {
    certs = testCertificates();
  });
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    certs.remove();
  });

  it('is delivered through the TLS connector and each message gets its receipt', async () => {
    const local = certs.make('campaign', ['DNS:localhost', 'IP:127.0.0.1']);
    const smsc = await new TestSmsc({ tls: { key: local.key, cert: local.cert } }).listen();
    cleanups.push(() => smsc.close());
    const transport = new SmppTransport(
      testSmppOptions(smsc.url, {
        name: 'secure',
        tls: { caFile: local.certFile, checkServerName: true },
        backpressureRetries: 1,
      }),
      recordingLog().log,
    );
    const worker = testDeliveryWorker(h(), transport);
    await worker.start();
    cleanups.push(() => worker.stop());
    const a = await h().account({ credits: 10 });
    const sent = await call(h().app, 'POST', '/send', {
      token: a.token,
      json: {
        sms: {
          message: { text: 'Sealed', pushtype: 'alert', sender: 'Pigeon' },
          recipients: { gsm: [{ value: '33612345601' }, { value: '33612345602' }] },
        },
      },
    });
    expect(sent.body.status, sent.body.details).toBe(1);
    const states = () =>
      h()
        .deps.store.db.selectFrom('messages')
        .select(['state', 'dlr_status'])
        .where('campaign_id', '=', Number(sent.body.ticket))
        .execute();
    await waitFor(
      async () => (await states()).every((m) => m.state === 'delivered'),
      'both messages delivered over TLS',
    );
    expect(smsc.submits.map((s) => s.destination).sort()).toEqual(['33612345601', '33612345602']);
  });
});
