// The pruning job: deletes, kind by kind, the rows only Pigeon reads once they are older than their
// PRUNE_*_AFTER age. Each capability prunes its own tables through its service; deps.ts lists them as tasks,
// one line each. A task deletes a bounded batch per statement, and the job pauses between two statements,
// so a backlog of millions never holds the database (SQLite's one write lock) for long.
import { durationMs } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import type { Log } from '../shared/log.ts';
import { createPeriodicJob, rest } from '../shared/periodic-job.ts';

export interface PruneTask {
  /** The kind of rows, as logs and the pass's report name it (the table, mostly). */
  name: string;
  /** How old a row gets before it goes, in ms; undefined keeps them all. */
  keepMs: number | undefined;
  /**
   * Deletes up to `limit` rows older than `before` (epoch ms) in one statement and answers how many went;
   * fewer than `limit` means none is left to go for now.
   */
  prune(before: number, limit: number): Promise<number>;
}

/** A PRUNE_*_AFTER value in ms: `30d`, `12h`…; `0` and `off` keep everything (undefined). */
export function pruneAgeMs(value: string): number | undefined {
  return value === '0' || value === 'off' ? undefined : durationMs(value);
}

/** A task from its config value: `pruneTask('events', config.PRUNE_EVENTS_AFTER, (before, limit) => …)`. */
export function pruneTask(name: string, age: string, prune: PruneTask['prune']): PruneTask {
  return { name, keepMs: pruneAgeMs(age), prune };
}

export type PruneJob = ReturnType<typeof createPruneJob>;

export function createPruneJob(deps: {
  tasks: readonly PruneTask[];
  clock: Clock;
  /** Rows one statement deletes at most (PRUNE_BATCH_ROWS). */
  batchRows: number;
  /** Rest between two statements of a task that still has rows to go (PRUNE_PAUSE_MS). */
  pauseMs: number;
  /** Time between the ends of two passes (PRUNE_EVERY), bounded as every periodic job's (shared/periodic-job.ts). */
  everyMs: number;
  log: Log;
}) {
  const { tasks, clock, batchRows, pauseMs, log } = deps;

  /**
   * One pass: every task whose age is set deletes what is older than now less its age, batch after batch
   * until a batch comes back short. Returns the rows deleted per task. A stop ends the pass after the
   * statement in progress; the next pass goes on from there, as rows are chosen by age, not remembered.
   */
  async function runOnce(stopping?: AbortSignal): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const task of tasks) {
      if (task.keepMs === undefined || stopping?.aborted) continue;
      const before = clock.now() - task.keepMs;
      let total = 0;
      for (;;) {
        const n = await task.prune(before, batchRows);
        total += n;
        if (n < batchRows || stopping?.aborted) break;
        await rest(pauseMs, stopping);
      }
      deleted[task.name] = total;
    }
    return deleted;
  }

  const job = createPeriodicJob({
    name: 'pruning',
    everyMs: deps.everyMs,
    log,
    async pass(stopping) {
      const deleted = await runOnce(stopping);
      if (Object.values(deleted).some((n) => n > 0)) log.info({ deleted }, 'pruning: old rows deleted');
    },
  });

  return {
    runOnce: () => runOnce(),
    /** A pass now, then one `everyMs` after each pass ends. */
    start: job.start,
    /** Ends the pause in progress, lets the statement in progress finish, and stops. */
    stop: job.stop,
  };
}
