// Pigeon's dependencies and API on the test PostgreSQL reached through a TCP proxy the test can cut or stall
// (./tcp-proxy.ts), in a schema of their own, dropped afterwards.
import pg from 'pg';
import pino from 'pino';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import type { Clock } from '../../src/shared/clock.ts';
import { withAdvisoryLock } from '../../src/store/db.ts';
import { TcpProxy } from './tcp-proxy.ts';

export interface ViaProxy {
  proxy: TcpProxy;
  deps: Deps;
  app: App;
  /** Restores the proxy, closes the app and the dependencies, and drops the schema. */
  close(): Promise<void>;
}

export async function pigeonViaProxy(
  schema: string,
  env: Record<string, string> = {},
  overrides: { clock?: Clock } = {},
): Promise<ViaProxy> {
  const base = new URL(inject('pgUrl'));
  const proxy = await new TcpProxy({ host: base.hostname, port: Number(base.port || 5432) }).listen();
  const viaProxy = new URL(base);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  viaProxy.searchParams.set('schema', schema);
  const config = loadConfig({ DATABASE_URL: viaProxy.toString(), LOG_LEVEL: 'silent', ...env });
  const deps = await createDeps(config, { logger: pino({ level: 'silent' }), ...overrides });
  const app = buildApi(deps);
  await app.ready();
  return {
    proxy,
    deps,
    app,
    async close() {
      proxy.restore();
      await app.close();
      await deps.close();
      await proxy.close();
      // Dropped under the migration lock, as the harness drops its schemas.
      await withAdvisoryLock(inject('pgUrl'), async () => {
        const client = new pg.Client({ connectionString: inject('pgUrl') });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      });
    },
  };
}
