// Pruning what only Pigeon reads: each kind goes once older than its PRUNE_*_AFTER age, exactly (a row dated
// at the cutoff stays), in statements of PRUNE_BATCH_ROWS rows; never an unfolded click, never an event a
// webhook delivery still needs, never an unfinished delivery or alert job.
import { expect, it } from 'vitest';
import { createPruneJob, type PruneTask, pruneTask } from '../../src/lifecycle/prune-job.ts';
import { call, describeEachDialect } from '../helpers/harness.ts';

const day = 86_400_000;
const keepMs = 30 * day;
const quiet = { info() {}, warn() {}, error() {} };

describeEachDialect(
  'pruning',
  (h) => {
    const db = () => h().deps.store.db;

    /** The harness's own tasks (from its config), each statement recorded with its bound. */
    function recordedJob(statements: [string, number, number][]) {
      const tasks: PruneTask[] = h().deps.services.pruneTasks.map((task) => ({
        ...task,
        prune: async (before, limit) => {
          const n = await task.prune(before, limit);
          statements.push([task.name, limit, n]);
          return n;
        },
      }));
      return createPruneJob({ tasks, clock: h().clock, batchRows: 2, pauseMs: 0, everyMs: day, log: quiet });
    }

    const ids = async (
      table:
        | 'webhook_attempts'
        | 'webhook_deliveries'
        | 'events'
        | 'alert_jobs'
        | 'clicks'
        | 'orphan_receipts',
    ) => (await db().selectFrom(table).select('id').orderBy('id').execute()).map((r) => Number(r.id));

    it('deletes exactly the rows older than each age, in statements of PRUNE_BATCH_ROWS, and keeps unfinished work, undelivered events and unfolded clicks', async () => {
      const a = await h().account();
      const now = h().clock.now();
      const cutoff = now - keepMs;
      const old = cutoff - 1;

      // Webhook attempts: five old ones (three statements of at most two), one at the cutoff, one recent.
      const attemptAt = [old - 4, old - 3, old - 2, old - 1, old, cutoff, now];
      for (const [i, attempted_at] of attemptAt.entries()) {
        await db()
          .insertInto('webhook_attempts')
          .values({
            webhook_id: 1,
            delivery_id: 1,
            event_id: null,
            event_type: 'DLR',
            attempt: i + 1,
            http_code: 500,
            error: null,
            latency_ms: 3,
            attempted_at,
            next_attempt_at: null,
          })
          .execute();
      }
      const keptAttempts = (await ids('webhook_attempts')).slice(5);

      // Events: written at `created`, fanned out or not, with deliveries in the given states, finished when.
      const event = async (created: number, fannedOut: number, deliveries: [string, number][]) => {
        const { id } = await db()
          .insertInto('events')
          .values({
            account_id: a.id,
            type: 'DLR',
            payload: '{}',
            campaign_id: null,
            created_at: created,
            fanned_out: fannedOut,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const delivered: number[] = [];
        for (const [state, updated] of deliveries) {
          const row = await db()
            .insertInto('webhook_deliveries')
            .values({
              webhook_id: 1,
              account_id: a.id,
              event_id: id,
              event_type: 'DLR',
              payload: null,
              state,
              attempts: 1,
              next_attempt_at: updated,
              lease_until: state === 'sending' ? now + 60_000 : null,
              created_at: created,
              updated_at: updated,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          delivered.push(Number(row.id));
        }
        return { id: Number(id), deliveries: delivered };
      };
      const bare = await event(old, 1, []);
      // Its deliveries finished recently: they stay, and the event they no longer need goes.
      const done = await event(old, 1, [
        ['delivered', now],
        ['failed', now],
      ]);
      // Its deliveries finished long ago: they go, and then so does the event.
      const finishedLongAgo = await event(old, 1, [
        ['delivered', old],
        ['failed', old],
      ]);
      const retrying = await event(old, 1, [
        ['delivered', old],
        ['pending', old],
      ]);
      const held = await event(old, 1, [['held', old]]);
      const sending = await event(old, 1, [['sending', old]]);
      const notFannedOut = await event(old, 0, []);
      const atCutoff = await event(cutoff, 1, [['delivered', cutoff]]);
      const recent = await event(now, 1, [['failed', now]]);

      // Alert jobs: ended long ago go; pending or in a worker's hands stay whatever their age.
      const job = async (state: string, updated: number) =>
        Number(
          (
            await db()
              .insertInto('alert_jobs')
              .values({
                account_id: a.id,
                kind: 'email',
                recipient: 'ops@example.com',
                payload: '{}',
                state,
                attempts: 1,
                next_attempt_at: updated,
                lease_until: null,
                last_error: null,
                created_at: updated,
                updated_at: updated,
              })
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id,
        );
      const jobs = {
        sent: await job('sent', old),
        failed: await job('failed', old),
        pending: await job('pending', old),
        sending: await job('sending', old),
        atCutoff: await job('sent', cutoff),
        recent: await job('failed', now),
      };

      // Clicks: two old and one at the cutoff folded (the cursor is on the last), then an old one not folded.
      const click = async (clicked_at: number) =>
        Number(
          (
            await db()
              .insertInto('clicks')
              .values({
                link_id: 1,
                campaign_id: 1,
                account_id: a.id,
                message_seq: 0,
                clicked_at,
                user_agent: 'Mozilla/5.0',
                referer: null,
                ip: '192.0.2.0',
              })
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id,
        );
      await click(old - 1);
      await click(old);
      const foldedAtCutoff = await click(cutoff);
      await db()
        .updateTable('cursors')
        .set({ position: foldedAtCutoff })
        .where('name', '=', 'clicks')
        .execute();
      const unfoldedOld = await click(old);
      const unfoldedRecent = await click(now);

      // Orphan receipts.
      for (const received_at of [old - 1, old, cutoff, now]) {
        await db()
          .insertInto('orphan_receipts')
          .values({ smsc_id: `x${received_at}`, stat: 'DELIVRD', err: null, received_at })
          .execute();
      }
      const keptOrphans = (await ids('orphan_receipts')).slice(2);

      // The ids answered to earlier parts of long SMPP messages: three old (two of one message), one recent.
      const part = (part_id: number, campaign_id: number, created_at: number) =>
        db().insertInto('smpp_parts').values({ part_id, campaign_id, created_at }).execute();
      await part(1_700_000_000_000_001, 1, old - 1);
      await part(1_700_000_000_000_002, 1, old - 1);
      await part(1_700_000_000_000_003, 2, old);
      await part(1_700_000_000_000_004, 3, now);

      const statements: [string, number, number][] = [];
      const job1 = recordedJob(statements);
      expect(await job1.runOnce()).toEqual({
        webhook_attempts: 5,
        webhook_deliveries: 3,
        events: 3,
        alert_jobs: 2,
        clicks: 2,
        orphan_receipts: 2,
        idempotency_keys: 0,
        daily_message_counts: 0,
        console_sessions: 0,
        smpp_outbox: 0,
        smpp_submits: 0,
        smpp_parts: 3,
      });
      // Bounded: every statement asked for two rows at most, and a full one was followed by another.
      expect(statements.every(([, limit, n]) => limit === 2 && n <= 2)).toBe(true);
      expect(statements.filter(([name]) => name === 'webhook_attempts').map(([, , n]) => n)).toEqual([
        2, 2, 1,
      ]);

      expect(await ids('webhook_attempts')).toEqual(keptAttempts);
      // The old finished deliveries of `retrying` went (their event stays: its pending delivery needs it).
      expect(await ids('webhook_deliveries')).toEqual(
        [
          ...done.deliveries,
          retrying.deliveries[1],
          ...held.deliveries,
          ...sending.deliveries,
          ...atCutoff.deliveries,
          ...recent.deliveries,
        ].sort((x, y) => x - y),
      );
      expect(await ids('events')).toEqual(
        [retrying.id, held.id, sending.id, notFannedOut.id, atCutoff.id, recent.id].sort((x, y) => x - y),
      );
      expect(await ids('events')).not.toContain(bare.id);
      expect(await ids('events')).not.toContain(finishedLongAgo.id);
      expect(await ids('alert_jobs')).toEqual(
        [jobs.pending, jobs.sending, jobs.atCutoff, jobs.recent].sort((x, y) => x - y),
      );
      expect(await ids('clicks')).toEqual([foldedAtCutoff, unfoldedOld, unfoldedRecent]);
      expect(await ids('orphan_receipts')).toEqual(keptOrphans);
      const parts = await db().selectFrom('smpp_parts').select('part_id').execute();
      expect(parts.map((p) => Number(p.part_id))).toEqual([1_700_000_000_000_004]);

      // A second pass finds nothing more; once the clock passes the cutoff rows, they go too, but the
      // unfolded click and the events still needed stay.
      expect(new Set(Object.values(await recordedJob([]).runOnce()))).toEqual(new Set([0]));
      h().clock.advance(1);
      expect(await recordedJob([]).runOnce()).toMatchObject({
        events: 1,
        alert_jobs: 1,
        clicks: 1,
        orphan_receipts: 1,
      });
      expect(await ids('clicks')).toEqual([unfoldedOld, unfoldedRecent]);
      expect(await ids('events')).toEqual(
        [retrying.id, held.id, sending.id, notFannedOut.id, recent.id].sort((x, y) => x - y),
      );
    });

    it('the job also deletes Idempotency-Key answers once past their 24 h, not before', async () => {
      const a = await h().account({ credits: 100 });
      const send = () =>
        call(h().app, 'POST', '/send', {
          token: a.token,
          headers: { 'idempotency-key': 'prune-me' },
          json: { sms: { message: { text: 'hello' }, recipients: { gsm: [{ value: '33612345678' }] } } },
        });
      expect((await send()).body.status).toBe(1);
      const keys = () => db().selectFrom('idempotency_keys').select('key').execute();
      expect(await keys()).toHaveLength(1);
      h().clock.advance(day - 60_000);
      expect((await recordedJob([]).runOnce()).idempotency_keys).toBe(0);
      expect(await keys()).toHaveLength(1);
      h().clock.advance(2 * day);
      expect((await recordedJob([]).runOnce()).idempotency_keys).toBe(1);
      expect(await keys()).toHaveLength(0);
    });
  },
  {
    PRUNE_WEBHOOK_ATTEMPTS_AFTER: '30d',
    PRUNE_WEBHOOK_DELIVERIES_AFTER: '30d',
    PRUNE_EVENTS_AFTER: '30d',
    PRUNE_ALERT_JOBS_AFTER: '30d',
    PRUNE_CLICKS_AFTER: '30d',
    PRUNE_ORPHAN_RECEIPTS_AFTER: '30d',
  },
);

it('a kind whose age is 0 or off is never pruned; a full batch is followed by another after the pause, a short one ends the kind', async () => {
  const calls: string[] = [];
  const counting = (name: string, results: number[]) =>
    pruneTask(name, '1d', async () => {
      calls.push(name);
      return results.shift() ?? 0;
    });
  const job = createPruneJob({
    tasks: [
      pruneTask('off', 'off', async () => {
        calls.push('off');
        return 0;
      }),
      pruneTask('zero', '0', async () => {
        calls.push('zero');
        return 0;
      }),
      counting('three-batches', [10, 10, 3]),
      counting('one-batch', [0]),
    ],
    clock: { now: () => Date.UTC(2026, 0, 5) },
    batchRows: 10,
    pauseMs: 1,
    everyMs: day,
    log: quiet,
  });
  expect(await job.runOnce()).toEqual({ 'three-batches': 23, 'one-batch': 0 });
  expect(calls).toEqual(['three-batches', 'three-batches', 'three-batches', 'one-batch']);
});
