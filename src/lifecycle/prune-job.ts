// The pruning job: deletes, kind by kind, the rows only Pigeon reads once they are older than their
// PRUNE_*_AFTER age. Each capability prunes its own tables through its service; deps.ts lists them as tasks,
// one line each. A task deletes a bounded batch per statement, and the job pauses between two statements,
// so a backlog of millions never holds the database (SQLite's one write lock) for long.
import { durationMs } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import type { Log } from '../shared/log.ts';

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

/** Node's timers hold at most 2^31 - 1 ms (about 24.8 days); a longer period waits that long. */
const maxTimerMs = 2 ** 31 - 1;

export type PruneJob = ReturnType<typeof createPruneJob>;

export function createPruneJob(deps: {
  tasks: readonly PruneTask[];
  clock: Clock;
  /** Rows one statement deletes at most (PRUNE_BATCH_ROWS). */
  batchRows: number;
  /** Rest between two statements of a task that still has rows to go (PRUNE_PAUSE_MS). */
  pauseMs: number;
  /** Time between the ends of two passes (PRUNE_EVERY). */
  everyMs: number;
  log: Log;
}) {
  const { tasks, clock, batchRows, pauseMs, log } = deps;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  let endPause: (() => void) | undefined;

  function pause(): Promise<void> {
    if (pauseMs === 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      const rest = setTimeout(done, pauseMs);
      function done() {
        clearTimeout(rest);
        endPause = undefined;
        resolve();
      }
      endPause = done;
    });
  }

  /**
   * One pass: every task whose age is set deletes what is older than now less its age, batch after batch
   * until a batch comes back short. Returns the rows deleted per task. A stop ends the pass after the
   * statement in progress; the next pass goes on from there, as rows are chosen by age, not remembered.
   */
  async function runOnce(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const task of tasks) {
      if (task.keepMs === undefined || stopped) continue;
      const before = clock.now() - task.keepMs;
      let total = 0;
      for (;;) {
        const n = await task.prune(before, batchRows);
        total += n;
        if (n < batchRows || stopped) break;
        await pause();
      }
      deleted[task.name] = total;
    }
    return deleted;
  }

  async function pass(): Promise<void> {
    try {
      const deleted = await runOnce();
      if (Object.values(deleted).some((n) => n > 0)) log.info({ deleted }, 'pruning: old rows deleted');
    } catch (error) {
      log.error({ err: error }, 'pruning pass failed; the next one will try again');
    }
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(
      () => {
        running = pass().finally(() => {
          running = undefined;
          schedule(deps.everyMs);
        });
      },
      Math.min(delayMs, maxTimerMs),
    );
    timer.unref();
  }

  return {
    runOnce,
    /** A pass now, then one `everyMs` after each pass ends. */
    start: () => schedule(0),
    /** Ends the pause in progress, lets the statement in progress finish, and stops. */
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      endPause?.();
      await running;
    },
  };
}
