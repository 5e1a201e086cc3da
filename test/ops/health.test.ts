// GET /health and GET /ready: outside authentication; /ready answers 503 with what is not ready while the
// database does not answer (PostgreSQL behind a proxy the test cuts), while a migration is missing, and while
// a delivery process has no SMPP bind up (the loopback SMSC stopped), and 200 again once each comes back.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DeliveryWorker } from '../../src/delivery/delivery-worker.ts';
import { SmppTransport } from '../../src/delivery/smpp/smpp-transport.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { pigeonViaProxy, type ViaProxy } from '../helpers/pg-via-proxy.ts';
import { TestSmsc, testSmppOptions } from '../helpers/smsc.ts';
import type { TcpProxy } from '../helpers/tcp-proxy.ts';
import { waitFor } from '../helpers/wait.ts';
import { testDeliveryWorker } from '../helpers/worker.ts';

const quiet = { info() {}, warn() {}, error() {} };

describeEachDialect('health and readiness', (h) => {
  let app: App;
  const running: { worker: DeliveryWorker; smsc: TestSmsc }[] = [];

  beforeAll(async () => {
    app = buildApi(h().deps);
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });
  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.worker.stop();
      await r.smsc.close();
    }
  });

  it('GET /health answers 200 without a token', async () => {
    const res = await call(app, 'GET', '/health');
    expect(res.httpCode).toBe(200);
    expect(res.body).toEqual({ status: 1, message: 'OK' });
  });

  it('GET /ready answers 200 without a token when the database answers and every migration is applied', async () => {
    const res = await call(app, 'GET', '/ready');
    expect(res.httpCode).toBe(200);
    expect(res.body).toEqual({
      status: 1,
      message: 'OK',
      checks: { database: 'ok', migrations: 'ok' },
    });
  });

  it('GET /ready answers 503 naming a migration that is not applied, and 200 once it is again', async () => {
    const { db } = h().deps.store;
    const last = await db
      .selectFrom('kysely_migration' as never)
      .select(['name' as never, 'timestamp' as never])
      .orderBy('name' as never, 'desc')
      .executeTakeFirstOrThrow();
    const { name, timestamp } = last as { name: string; timestamp: string };
    await db
      .deleteFrom('kysely_migration' as never)
      .where('name' as never, '=', name as never)
      .execute();
    try {
      const res = await call(app, 'GET', '/ready');
      expect(res.httpCode).toBe(503);
      expect(res.body.status).toBe(-99);
      expect(res.body.message).toBe('Not ready');
      expect(res.body.checks.database).toBe('ok');
      expect(res.body.checks.migrations).toContain(name);
      expect(res.body.details).toBe(`migrations: ${res.body.checks.migrations}`);
    } finally {
      await db
        .insertInto('kysely_migration' as never)
        .values({ name, timestamp } as never)
        .execute();
    }
    expect((await call(app, 'GET', '/ready')).httpCode).toBe(200);
  });

  // Last: the stopped transport stays part of this process's readiness.
  it('GET /ready answers 503 while a delivery process has no SMPP bind up, and 200 once the SMSC is back', async () => {
    const smsc = await new TestSmsc().listen();
    const transport = new SmppTransport(
      testSmppOptions(smsc.url, { reconnectMaxMs: 200, backpressureRetries: 1 }),
      quiet,
    );
    const worker = testDeliveryWorker(h(), transport, {}, quiet);
    h().deps.ops.watchTransport(transport);
    await worker.start();
    running.push({ worker, smsc });
    const ready = async () => (await call(app, 'GET', '/ready')).httpCode === 200;

    await waitFor(ready, 'the SMPP bind to come up');
    expect((await call(app, 'GET', '/ready')).body.checks.transport).toBe('ok');

    await smsc.restartAfter(async () => {
      const down = await waitFor(async () => {
        const res = await call(app, 'GET', '/ready');
        return res.httpCode === 503 ? res : undefined;
      }, '/ready to answer 503 with the SMSC gone');
      expect(down.body.checks.transport).toBe('no SMPP bind is up');
      expect(down.body.details).toBe('transport: no SMPP bind is up');
      expect(down.body.checks.database).toBe('ok');
    });
    await waitFor(ready, '/ready to answer 200 once the SMSC is back');
  });
});

// Needs a real PostgreSQL reached through a proxy the test can cut: SQLite, a file, does not go away.
describe.skipIf(!inject('pgUrl'))('readiness when PostgreSQL goes away [postgres]', () => {
  let proxy: TcpProxy;
  let app: App;
  let pigeon: ViaProxy | undefined;

  beforeAll(async () => {
    pigeon = await pigeonViaProxy(`t_ready_${process.pid}`);
    ({ proxy, app } = pigeon);
  });
  afterAll(async () => {
    await pigeon?.close();
  });

  it('GET /ready answers 503 "database: not answering" while the database is cut off, and 200 once it is back', async () => {
    expect((await call(app, 'GET', '/ready')).httpCode).toBe(200);

    proxy.cutAll();
    const down = await waitFor(async () => {
      const res = await call(app, 'GET', '/ready');
      return res.httpCode === 503 ? res : undefined;
    }, '/ready to answer 503 with the database cut off');
    expect(down.body.status).toBe(-99);
    expect(down.body.checks.database).toMatch(/^(not answering|no answer within \d+ ms)$/);
    expect(down.body.details).toContain('database: ');
    // Outside the database: still up.
    expect((await call(app, 'GET', '/health')).httpCode).toBe(200);

    proxy.restore();
    await waitFor(
      async () => (await call(app, 'GET', '/ready')).httpCode === 200,
      '/ready to answer 200 with the database back',
    );
  });
});
