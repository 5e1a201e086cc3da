// PostgreSQL unreachable without closing anything (its host gone, the network cut: a proxy the test stalls,
// which keeps every connection open and passes nothing on): each request is answered with the envelope within
// the connect and query timeouts instead of hanging, and requests succeed again once the database answers.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/http/types.ts';
import { call } from '../helpers/harness.ts';
import { pigeonViaProxy, type ViaProxy } from '../helpers/pg-via-proxy.ts';
import type { TcpProxy } from '../helpers/tcp-proxy.ts';
import { waitFor } from '../helpers/wait.ts';

const connectTimeoutMs = 1000;
const queryTimeoutMs = 1500;

describe.skipIf(!inject('pgUrl'))('PostgreSQL unreachable [postgres]', () => {
  let proxy: TcpProxy;
  let app: App;
  let token: string;
  let pigeon: ViaProxy | undefined;

  beforeAll(async () => {
    pigeon = await pigeonViaProxy(`t_unreachable_${process.pid}`, {
      PG_POOL_SIZE: '4',
      PG_CONNECT_TIMEOUT_MS: String(connectTimeoutMs),
      PG_QUERY_TIMEOUT_MS: String(queryTimeoutMs),
      RATE_LIMIT_IP_RPS: '0',
    });
    ({ proxy, app } = pigeon);
    const created = await pigeon.deps.services.accounts.createAccount({
      email: 'unreachable@example.com',
      password: 'correct horse battery',
      credits: 100,
    });
    token = created.token;
  });

  afterAll(async () => {
    await pigeon?.close();
  });

  const send = () =>
    call(app, 'POST', '/send', {
      token,
      json: {
        sms: {
          message: { text: 'Unreachable', pushtype: 'alert' },
          recipients: { gsm: [{ value: '33612345678' }] },
        },
      },
    });

  it('answers every request with -99 within the connect and query timeouts while nothing comes back, and serves again once it does', async () => {
    expect((await call(app, 'GET', '/credits', { token })).body.status).toBe(1);
    proxy.stall();
    // More requests than connections: some wait for a connection of the pool, some for a new one, some for
    // the answer to a query already sent.
    const startedAt = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => {
        const request = i % 2 === 0 ? call(app, 'GET', '/credits', { token }) : send();
        return request.then((r) => ({ ...r, ms: Date.now() - startedAt }));
      }),
    );
    for (const a of answers) {
      expect([500, 503]).toContain(a.httpCode);
      expect(a.body.status).toBe(-99);
      // A request waits at most for a connection, then for its query's answer (its transaction's statements
      // each have the query bound: a send runs a few before it knows the database is gone).
      expect(a.ms).toBeLessThan(connectTimeoutMs + 3 * queryTimeoutMs + 1000);
    }
    proxy.restore();
    const back = Date.now();
    await waitFor(async () => (await send()).body.status === 1, 'a send accepted again', 10_000);
    expect(Date.now() - back).toBeLessThan(5000);
  }, 30_000);
});
