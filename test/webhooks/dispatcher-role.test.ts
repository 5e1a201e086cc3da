// The dispatcher runs where workers run: started by startRuntime when ROLE is all or worker, and stopped
// with them.
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import { type Running, startRuntime } from '../../src/runtime.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

describeEachDialect(
  'webhook dispatcher per ROLE',
  (h) => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function serve(role: 'all' | 'worker'): Promise<{ deps: Deps; running: Running }> {
      const config = loadConfig({
        DATABASE_URL: h().databaseUrl,
        ROLE: role,
        HOST: '127.0.0.1',
        PORT: '0',
        LINK_PORT: '0',
        WORKER_POLL_MS: '10',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        LOG_LEVEL: 'silent',
      });
      const deps = await createDeps(config, { logger: pino({ level: 'silent' }) });
      cleanups.push(() => deps.close());
      const running = await startRuntime(deps);
      cleanups.push(() => running.stop());
      return { deps, running };
    }

    for (const role of ['all', 'worker'] as const) {
      it(`ROLE=${role} delivers webhooks, and stopping the servers stops the dispatcher`, async () => {
        const receiver = await new WebhookReceiver().listen();
        cleanups.push(() => receiver.close());
        const a = await h().account();
        const created = await call(h().app, 'POST', '/webhook', {
          token: a.token,
          json: { webhook: { type: 'BALANCE_ALERT', url: receiver.url() } },
        });
        expect(created.body.status).toBe(1);
        const { deps, running } = await serve(role);
        expect(running.apiUrl === undefined).toBe(role === 'worker');
        // The servers run on the system clock.
        await deps.store.db
          .insertInto('events')
          .values({
            account_id: a.id,
            campaign_id: null,
            type: 'BALANCE_ALERT',
            payload: '{"balance":5}',
            created_at: Date.now(),
          })
          .execute();
        await waitFor(() => receiver.requests.length === 1, 'the delivery');
        expect(receiver.requests[0].body).toBe('{"balance":5}');
        await cleanups.pop()!();
        // Stopped: a new event stays in the outbox.
        await deps.store.db
          .insertInto('events')
          .values({
            account_id: a.id,
            campaign_id: null,
            type: 'BALANCE_ALERT',
            payload: '{"balance":4}',
            created_at: Date.now(),
          })
          .execute();
        const waiting = await deps.store.db
          .selectFrom('events')
          .select('id')
          .where('fanned_out', '=', 0)
          .execute();
        expect(waiting).toHaveLength(1);
      });
    }
  },
  { WEBHOOK_ALLOW_PRIVATE: 'true' },
);
