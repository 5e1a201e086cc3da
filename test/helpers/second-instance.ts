// A second Pigeon on the database of a harness: its own createDeps (its own connection pool on PostgreSQL,
// its own connection to the same file on SQLite) and its own API app, sharing nothing with the first but
// the database and the test's clock. What two processes behind one load balancer are to each other.
import pino from 'pino';
import { createDeps, type Deps } from '../../src/deps.ts';
import type { App } from '../../src/http/types.ts';
import { buildApi } from '../../src/runtime.ts';
import type { Harness } from './harness.ts';

export interface SecondInstance {
  deps: Deps;
  app: App;
  close(): Promise<void>;
}

export async function secondInstance(h: Harness): Promise<SecondInstance> {
  const deps = await createDeps(h.config, { clock: h.clock, logger: pino({ level: 'silent' }) });
  const app = buildApi({ config: h.config, logger: deps.logger, services: deps.services });
  await app.ready();
  return {
    deps,
    app,
    async close() {
      await app.close();
      await deps.close();
    },
  };
}
