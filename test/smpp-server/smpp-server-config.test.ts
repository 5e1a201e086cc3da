// The SMPP server as configured: off without SMPP_SERVER_PORT, plain SMPP on it and SMPP over TLS on
// SMPP_SERVER_TLS_PORT with the PEM certificate and key given; a TLS port without them stops the start.

import smpp, { type Pdu } from 'smpp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { smppServerFromConfig } from '../../src/smpp-server/smpp-server-config.ts';
import { describeEachDialect } from '../helpers/harness.ts';
import { type TestCertificates, testCertificates } from '../helpers/tls-certs.ts';

const silent = { info() {}, warn() {} };

describeEachDialect('SMPP server configuration', (h) => {
  let certs: TestCertificates;
  beforeAll(async () => {
    certs = testCertificates();
    const account = await h().account();
    await h().deps.services.smppUsers.createForAccount(account.id, { system_id: 'conf', password: 'pw' });
  });
  afterAll(() => certs.remove());

  const services = () => ({
    smppUsers: h().deps.services.smppUsers,
    smppMessages: h().deps.services.smppMessages,
  });

  it('is off without SMPP_SERVER_PORT', async () => {
    const server = await smppServerFromConfig({
      config: h().config,
      clock: h().clock,
      logger: silent,
      store: h().deps.store,
      services: services(),
    });
    expect(server).toBeUndefined();
  });

  it('binds over plain SMPP and over TLS with the configured certificate', async () => {
    const cert = certs.make('smpp-server', ['IP:127.0.0.1']);
    const config = loadConfig({
      SMPP_SERVER_PORT: '0',
      SMPP_SERVER_TLS_PORT: '0',
      SMPP_SERVER_TLS_CERT: cert.certFile,
      SMPP_SERVER_TLS_KEY: cert.keyFile,
    });
    const server = (await smppServerFromConfig({
      config,
      clock: h().clock,
      logger: silent,
      store: h().deps.store,
      services: services(),
    }))!;
    try {
      const [plainPort, tlsPort] = server.ports();
      for (const options of [
        { host: '127.0.0.1', port: plainPort },
        { host: '127.0.0.1', port: tlsPort, tls: true, ca: cert.cert },
      ]) {
        const session = smpp.connect(options);
        const resp = await new Promise<Pdu>((resolve, reject) => {
          session.on('error', reject);
          session.on(options.tls ? 'secureConnect' : 'connect', () =>
            session.bind_transceiver({ system_id: 'conf', password: 'pw' }, resolve),
          );
        });
        expect(resp.command_status).toBe(0);
        await new Promise<void>((resolve) => session.destroy(() => resolve()));
      }
    } finally {
      await server.close();
    }
  });

  it('refuses SMPP_SERVER_TLS_PORT without the certificate and key', () => {
    expect(() => loadConfig({ SMPP_SERVER_TLS_PORT: '3550' })).toThrow(ConfigError);
    expect(() => loadConfig({ SMPP_SERVER_TLS_PORT: '3550', SMPP_SERVER_TLS_CERT: '/x.pem' })).toThrow(
      /SMPP_SERVER_TLS_CERT and SMPP_SERVER_TLS_KEY/,
    );
  });
});
